#include <stdio.h>
#include "kv.h"

int main(void)
{
    static struct kv table[31];
    const char *lines[] = {"alpha=1", "beta=2", "gamma=3"};
    char out[80];
    int value;
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
        kv_store(table, 31, lines[i]);
    if (kv_table_get(table, 31, "beta", &value) == 0 && kv_format(out, sizeof out, "beta", value) > 0)
        puts(out);
    printf("%zu keys\n", kv_count(table, 31));
    return 0;
}
