#include <stdio.h>
#include <string.h>
#include "lzx.h"

int main(int argc, char **argv)
{
    static unsigned char in[1 << 16], out[1 << 17];
    size_t n;
    if (argc > 1 && strcmp(argv[1], "-h") == 0) {
        show_help();
        return 0;
    }
    n = fread(in, 1, sizeof in, stdin);
    fwrite(out, 1, pack(in, n, out), stdout);
    return 0;
}
