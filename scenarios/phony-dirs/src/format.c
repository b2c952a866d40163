#include <stdio.h>
#include "kv.h"

int kv_format(char *out, size_t cap, const char *key, int value)
{
    return snprintf(out, cap, "%s=%d", key, value);
}
