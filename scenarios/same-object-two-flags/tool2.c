#include <stdio.h>
#include "common.h"

int main(int argc, char **argv)
{
    printf("tool2: %s\n", variant_name());
    for (int i = 1; i < argc; i++)
        printf("%016lx  %s\n", checksum(argv[i]), argv[i]);
    return 0;
}
