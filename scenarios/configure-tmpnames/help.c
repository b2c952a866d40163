#include <stdio.h>
#include "config.h"
#include "lzx.h"

/* lzop's src/help.c does the same: the build date and time in the help text */
static const char built[] = "lzx 1.0 built " __DATE__ " " __TIME__;

void show_help(void)
{
    puts(built);
#if defined(HAVE_MEMMOVE)
    puts("usage: lzx < in > out");
#endif
}
