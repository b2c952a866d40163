#include <stdio.h>
#include <string.h>

extern const unsigned *const crc_shards[];
extern const int crc_n_shards, crc_shard_len;

static unsigned crc_lookup(unsigned i)
{
    return crc_shards[i / crc_shard_len][i % crc_shard_len];
}

int main(int argc, char **argv)
{
    const char *s = argc > 1 ? argv[1] : "123456789";
    unsigned c = 0xffffffffu;
    for (size_t i = 0; i < strlen(s); i++)
        c = crc_lookup((c ^ (unsigned char)s[i]) & 0xff) ^ (c >> 8);
    printf("%08x\n", c ^ 0xffffffffu);
    return 0;
}
