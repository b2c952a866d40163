#ifndef LZX_H
#define LZX_H
#include <stddef.h>
void show_help(void);
size_t pack(const unsigned char *in, size_t n, unsigned char *out);
#endif
