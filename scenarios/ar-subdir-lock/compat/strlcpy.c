/* copy at most size-1 bytes and terminate; the length of src */
unsigned long strlcpy(char *dst, const char *src, unsigned long size) {
    unsigned long n = 0;
    while (src[n]) {
        if (n + 1 < size)
            dst[n] = src[n];
        n++;
    }
    if (size)
        dst[n < size ? n : size - 1] = 0;
    return n;
}
