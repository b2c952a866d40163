#ifndef KV_H
#define KV_H
#include <stddef.h>

struct kv { const char *key; int value; };

unsigned kv_hash(const char *s);
int kv_table_put(struct kv *t, size_t cap, const char *key, int value);
int kv_table_get(const struct kv *t, size_t cap, const char *key, int *value);
int kv_parse(const char *line, char *key, size_t keycap, int *value);
int kv_format(char *out, size_t cap, const char *key, int value);
int kv_store(struct kv *t, size_t cap, const char *line);
size_t kv_count(const struct kv *t, size_t cap);
#endif
