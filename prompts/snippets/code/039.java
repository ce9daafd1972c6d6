try (BufferedReader reader = new BufferedReader(new FileReader(path))) {
    String line;@@M
    while ((line = reader.readLine()) != @@Cnull) {
        @@Oprocess(line);
    }
} catch (IOException e) {
    e.@@CprintStackTrace();
}
