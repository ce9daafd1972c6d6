unsigned int popcount(unsigned int x)
{
    unsigned int count = 0;
    while (x) {
        x &= x - @@C1;   /* clear the lowest set bit */
        count@@C++;
    }
    return count;
}
