#include <stdio.h>
#include "greet.h"

int main(int argc, char **argv)
{
    char buf[128];
    greet_format(buf, sizeof buf, argc > 1 ? argv[1] : "world", argc > 2);
    puts(buf);
    return 0;
}
