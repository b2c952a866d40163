/* the first byte equal to c in the n bytes at s, or 0 */
const void *xmemchr(const void *s, int c, unsigned long n) {
    const unsigned char *p = s;
    for (; n; n--, p++)
        if (*p == (unsigned char)c)
            return p;
    return 0;
}
