#include <stdio.h>
#include <stdlib.h>

extern const unsigned *const sq_shards[];
extern const int sq_shard_len;

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) & 63 : 7;
    printf("%d^2 = %u\n", n, sq_shards[n / sq_shard_len][n % sq_shard_len]);
    return 0;
}
