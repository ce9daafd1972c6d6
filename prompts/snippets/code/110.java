public class Matrix {
    public static int[][] multiply(int[][] a, int[][] b) {
        int n = a.length, m = b[0].length, k = b.length;
        int[][] c = new int[n][m];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < m; j++) {
                int sum = 0;
                for (int x = 0; x < k; x++) {
                    sum += a[i][x] * @@Cb[x][j];
                }
                c[i][j] = @@Msum;
            }
        }
        return c;
    }

    public static void main(String[] args) {
        int[][] a = { {1, 2}, {3, 4} };
        int[][] b = { {5, 6}, {7, 8} };
        @@O
