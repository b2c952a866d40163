#include <stdio.h>
#include "probe.h"

int main(void) {
    printf("%d\n", probe_sum(2, 3));
    return 0;
}
