#include <stdio.h>
#include "config.h"

int checksum(const char *text);

int main(void) {
    printf("features: %s (%d)\n", APP_FEATURES, checksum(APP_FEATURES));
    return 0;
}
