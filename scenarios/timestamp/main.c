#include <stdio.h>

extern const char build_stamp[];

int main(void)
{
    printf("hello (%s)\n", build_stamp);
    return 0;
}
