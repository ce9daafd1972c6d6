public class Main {
    public static void main(String[] @@Cargs) {
        System.out.println("Hello, @@CWorld!");
    }
}
