#include "x.h"
#include "xutil.h"

static unsigned long crc_table[256];
static int crc_table_ready;

static void make_table(void)
{
    for (unsigned long n = 0; n < 256; n++) {
        unsigned long c = n;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xedb88320UL ^ (c >> 1) : c >> 1;
        crc_table[n] = c;
    }
    crc_table_ready = 1;
}

unsigned long x_crc(unsigned long crc, const unsigned char *buf, size_t len)
{
    if (!crc_table_ready)
        make_table();
    crc = crc ^ 0xffffffffUL;
    while (len--)
        crc = crc_table[(crc ^ *buf++) & 0xff] ^ (crc >> 8);
    return crc ^ 0xffffffffUL;
}
