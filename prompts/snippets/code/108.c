/* Binary search over a sorted array; returns the index or -1. */
int binary_search(const int *a, int n, int key)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (a[mid] == key)
            return mid;
        if (a[mid] < key)
            lo = mid + @@C1;
        else
            hi = @@Mmid - 1;
    }
    return -1;
}

int main(void)
{
    int primes[] = { 2, 3, 5, 7, 11, 13, 17, 19, 23, 29 };
    @@O
