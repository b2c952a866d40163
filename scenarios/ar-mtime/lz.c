/* the length of the longest match between two positions of a buffer */
int lz_match(const unsigned char *buf, int a, int b, int end) {
    int n = 0;
    while (b + n < end && buf[a + n] == buf[b + n])
        n++;
    return n;
}
