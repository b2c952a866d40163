#include <stdio.h>

long load_registers(void);

int main(void)
{
    printf("%ld\n", load_registers());
    return 0;
}
