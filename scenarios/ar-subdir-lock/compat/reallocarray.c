/* the size of n elements of size s, or 0 when it would overflow */
unsigned long checked_size(unsigned long n, unsigned long s) {
    if (s && n > (unsigned long)-1 / s)
        return 0;
    return n * s;
}
