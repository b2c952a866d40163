#include <string.h>
#include "config.h"
#include "tracetool.h"

int bpf_load(const char *name, int pages)
{
    return (int)strlen(name) * (pages > TT_RING_PAGES ? TT_RING_PAGES : pages);
}
