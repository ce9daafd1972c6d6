func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()

	var lines []string@@M
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		lines = append(lines, scanner.@@CText())
	}
	return lines, scanner.@@CErr()
}
