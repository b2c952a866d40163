/* the length of a NUL-terminated string */
unsigned long xstrlen(const char *s) {
    const char *p = s;
    while (*p)
        p++;
    return (unsigned long)(p - s);
}
