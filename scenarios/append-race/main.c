#include <stdio.h>
int net_init(void), fs_init(void), mm_init(void), crypto_init(void), sound_init(void);

int main(void)
{
    int ok = net_init() + fs_init() + mm_init() + crypto_init() + sound_init();
    printf("%d subsystems up\n", ok);
    return 0;
}
