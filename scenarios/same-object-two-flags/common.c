#include "common.h"

#ifndef VARIANT
#error "build with -DVARIANT=1 or -DVARIANT=2"
#endif

const char *variant_name(void)
{
#if VARIANT == 1
    return "fast checksum (fnv-1a)";
#else
    return "careful checksum (djb2)";
#endif
}

unsigned long checksum(const char *s)
{
#if VARIANT == 1
    unsigned long h = 14695981039346656037UL;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211UL;
#else
    unsigned long h = 5381;
    while (*s)
        h = h * 33 + (unsigned char)*s++;
#endif
    return h;
}
