#include <string.h>
#include "config.h"
#include "lzx.h"

/* run-length packing: byte, count (at most 255) */
size_t pack(const unsigned char *in, size_t n, unsigned char *out)
{
    size_t i = 0, o = 0;
    while (i < n) {
        size_t run = 1;
        while (i + run < n && in[i + run] == in[i] && run < 255)
            run++;
        out[o++] = in[i];
        out[o++] = (unsigned char)run;
        i += run;
    }
    return o;
}
