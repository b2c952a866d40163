#include <stdio.h>

/* a stand-in for the library the real package builds: deterministic */
int main(void)
{
    unsigned sum = 0;
    for (unsigned i = 0; i < 1000; i++)
        sum = sum * 31 + i;
    printf("%u\n", sum);
    return 0;
}
