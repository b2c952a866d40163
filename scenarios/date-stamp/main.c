#include <stdio.h>
#include "build-date.h"

int main(void)
{
    printf("hello, built %s\n", BUILD_DATE);
    return 0;
}
