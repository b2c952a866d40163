const char *banner(void);
