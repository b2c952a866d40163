#include <stdio.h>
#include <string.h>
#include "kv.h"

int kv_parse(const char *line, char *key, size_t keycap, int *value)
{
    const char *eq = strchr(line, '=');
    if (!eq || (size_t)(eq - line) >= keycap)
        return -1;
    memcpy(key, line, eq - line);
    key[eq - line] = '\0';
    return sscanf(eq + 1, "%d", value) == 1 ? 0 : -1;
}
