#include "x.h"
#include "xutil.h"

/* A toy run-length "deflate": pairs of (count, byte). */
size_t x_deflate(unsigned char *out, const unsigned char *in, size_t len)
{
    size_t o = 0, i = 0;
    while (i < len) {
        size_t run = 1;
        while (i + run < len && run < X_RUN_MAX && in[i + run] == in[i])
            run++;
        out[o++] = (unsigned char)run;
        out[o++] = in[i];
        i += run;
    }
    return o;
}
