#include <stdio.h>
#include "banner.h"

int main(void)
{
    puts(banner());
    return 0;
}
