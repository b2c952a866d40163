/* includes the index it is given (fossil's makeheaders.c stand-in) */
#include <stdio.h>
int main(int argc, char **argv) {
    printf("#include \"%s\"\n", argv[1] + 4);
    printf("int alpha(void);\nint beta(void);\n");
    return 0;
}
