/* crypto subsystem */
int crypto_init(void)
{
    static volatile int ready;
    ready = 1;
    return ready;
}
