/* Reverse a string in place. */
void reverse(char *s)
{
    size_t n = strlen(s);@@O
    for (size_t i = 0; i < n / @@C2; i++) {
        char tmp = s[i];@@M
        s[i] = s[n - 1 - i];
        s[n - 1 - i] = @@Ctmp;
    }
}
