/* mm subsystem */
int mm_init(void)
{
    static volatile int ready;
    ready = 1;
    return ready;
}
