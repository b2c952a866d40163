int checksum(const char *text) {
    int sum = 0;
    while (*text)
        sum = sum * 31 + *text++;
    return sum;
}
