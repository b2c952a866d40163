const char *variant_name(void);
unsigned long checksum(const char *s);
