#include <stdio.h>
#include <ctype.h>

/* Count characters, words and lines on standard input, like a tiny wc. */
int main(void)
{
    long chars = 0, words = 0, lines = 0;
    int in_word = 0;
    int c;@@M

    while ((c = getchar()) != EOF) {
        chars++;
        if (c == '\n')
            lines++;
        if (isspace(c)) {
            in_word = 0;
        } else if (!in_word) {
            in_word = 1;
            @@Mwords++;
        }
    }@@O

    printf("%ld %ld %ld\n", lines, words, @@Mchars);
    return 0;
}
