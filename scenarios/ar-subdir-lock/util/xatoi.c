/* a decimal integer at the start of s */
int xatoi(const char *s) {
    int n = 0, neg = *s == '-';
    if (neg || *s == '+')
        s++;
    while (*s >= '0' && *s <= '9')
        n = n * 10 + (*s++ - '0');
    return neg ? -n : n;
}
