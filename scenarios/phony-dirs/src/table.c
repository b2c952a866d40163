#include <string.h>
#include "kv.h"

int kv_table_put(struct kv *t, size_t cap, const char *key, int value)
{
    for (size_t i = 0, at = kv_hash(key) % cap; i < cap; i++, at = (at + 1) % cap) {
        if (!t[at].key || strcmp(t[at].key, key) == 0) {
            t[at].key = key;
            t[at].value = value;
            return 0;
        }
    }
    return -1;
}

int kv_table_get(const struct kv *t, size_t cap, const char *key, int *value)
{
    for (size_t i = 0, at = kv_hash(key) % cap; i < cap && t[at].key; i++, at = (at + 1) % cap) {
        if (strcmp(t[at].key, key) == 0) {
            *value = t[at].value;
            return 0;
        }
    }
    return -1;
}
