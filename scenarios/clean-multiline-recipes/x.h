#ifndef X_H
#define X_H
#include <stddef.h>

#define X_VERSION "1.2.3"

unsigned long x_adler(unsigned long adler, const unsigned char *buf, size_t len);
unsigned long x_crc(unsigned long crc, const unsigned char *buf, size_t len);
size_t x_deflate(unsigned char *out, const unsigned char *in, size_t len);
size_t x_inflate(unsigned char *out, const unsigned char *in, size_t len);

#endif
