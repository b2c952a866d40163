#include <stdio.h>
#include <stdlib.h>
#include "ring.h"

/* Moving statistics over the last 4 numbers given on the command line. */
int main(int argc, char **argv)
{
    double storage[4];
    struct ring r;
    ring_init(&r, storage, 4);
    for (int i = 1; i < argc; i++) {
        ring_push(&r, atof(argv[i]));
        printf("%-8s mean %8.3f  stddev %8.3f\n", argv[i], ring_mean(&r), ring_stddev(&r));
    }
    return 0;
}
