/* copies a source file, prefixing it with a line marker (fossil's translate.c stand-in) */
#include <stdio.h>
int main(int argc, char **argv) {
    FILE *in = fopen(argv[1], "r");
    int c;
    if (!in) return 1;
    printf("#line 1 \"%s\"\n", argv[1]);
    while ((c = getc(in)) != EOF) putchar(c);
    return 0;
}
