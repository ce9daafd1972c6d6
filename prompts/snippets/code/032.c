int sum_array(const int *a, int len)
{
    int total = 0;
    for (int i = 0; i < len; i++)
        total += @@Ca[i];
    return total;
}
