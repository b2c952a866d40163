#include "x.h"
#include "xutil.h"

size_t x_inflate(unsigned char *out, const unsigned char *in, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i + 1 < len; i += 2)
        for (unsigned char n = in[i]; n > 0; n--)
            out[o++] = in[i + 1];
    return o;
}
