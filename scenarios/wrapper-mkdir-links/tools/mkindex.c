/* one line per source file named (fossil's mkindex.c stand-in) */
#include <stdio.h>
int main(int argc, char **argv) {
    printf("static const char *pages[] = {\n");
    for (int i = 1; i < argc; i++) printf("  \"%s\",\n", argv[i]);
    printf("};\n#define PAGE_COUNT %d\n", argc - 1);
    return 0;
}
