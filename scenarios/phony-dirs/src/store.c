#include <stdlib.h>
#include <string.h>
#include "kv.h"

int kv_store(struct kv *t, size_t cap, const char *line)
{
    char key[64];
    int value;
    if (kv_parse(line, key, sizeof key, &value) != 0)
        return -1;
    char *copy = malloc(strlen(key) + 1);
    if (!copy)
        return -1;
    strcpy(copy, key);
    return kv_table_put(t, cap, copy, value);
}
