#include "kv.h"

size_t kv_count(const struct kv *t, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < cap; i++)
        n += t[i].key != NULL;
    return n;
}
