#include <stdio.h>
#include "config.h"
#include "tracetool.h"

void output_line(const char *what, int value)
{
    printf("tracetool %s: %s %d\n", TT_VERSION, what, value);
}
