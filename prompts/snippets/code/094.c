#include <stdio.h>

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a;
    int y = *(const int *)b;@@O
    return (x > y) - (x < y);
}

int main(void)
{
    int values[] = { 42, 7, 19, 3, 88, 23, 61 };
    size_t n = sizeof values / sizeof values[0];@@O

    qsort(values, n, sizeof values[0], @@Ccmp_int);

    printf("sorted:");@@M
    for (size_t i = 0; i < n; i++)
        printf(" %d", values[i]);
    @@Mprintf("\n");

    /* median of an odd-length array */
    printf("median: %d\n", values[n / @@C2]);
    @@O
