/* A C extension's hot loop: nothing in it depends on where it is built. */
unsigned long speed_sum(const unsigned char *data, unsigned long size)
{
    unsigned long sum = 0;
    for (unsigned long i = 0; i < size; i++)
        sum = sum * 31 + data[i];
    return sum;
}
