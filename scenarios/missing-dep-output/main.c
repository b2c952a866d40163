#include <stdio.h>
#include "registry.h"

int main(void)
{
    for (int i = 0; i < n_plugins; i++)
        printf("%s %08x\n", plugins[i].name, plugins[i].magic);
    return 0;
}
