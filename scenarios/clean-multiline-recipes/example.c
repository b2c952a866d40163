#include <stdio.h>
#include <string.h>
#include "x.h"

int main(void)
{
    static const unsigned char text[] = "aaaaabbbcccccccccd hello hello";
    unsigned char packed[2 * sizeof text], unpacked[sizeof text];
    size_t n = x_deflate(packed, text, sizeof text);
    size_t m = x_inflate(unpacked, packed, n);
    printf("x %s: %zu -> %zu -> %zu bytes, adler %08lx, crc %08lx, %s\n", X_VERSION,
           sizeof text, n, m, x_adler(1, text, sizeof text), x_crc(0, text, sizeof text),
           m == sizeof text && memcmp(text, unpacked, m) == 0 ? "ok" : "MISMATCH");
    return 0;
}
