#include "x.h"
#include "xutil.h"

unsigned long x_adler(unsigned long adler, const unsigned char *buf, size_t len)
{
    unsigned long a = adler & 0xffff, b = (adler >> 16) & 0xffff;
    while (len > 0) {
        size_t n = len < X_NMAX ? len : X_NMAX;
        len -= n;
        while (n--) {
            a += *buf++;
            b += a;
        }
        a %= X_BASE;
        b %= X_BASE;
    }
    return (b << 16) | a;
}
