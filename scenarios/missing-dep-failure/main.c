#include <stdio.h>
#include "version.h"
#include "util.h"

int main(void)
{
    printf("app %s (%d)\n", APP_VERSION, square(APP_VERSION_MAJOR));
    return 0;
}
