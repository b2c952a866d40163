#include <stdio.h>
#include "config.h"

int main(void) {
    printf("%s: %d worker threads by default\n", PACKAGE, DEFAULT_THREADS);
    return 0;
}
