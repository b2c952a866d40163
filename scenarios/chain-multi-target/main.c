#include <stdio.h>
#include <string.h>
#include "keywords.h"

int lookup(const char *word);

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        printf("%s: %d\n", argv[i], lookup(argv[i]));
    printf("%d keywords, first %s\n", (int)(sizeof keywords / sizeof *keywords), keywords[0]);
    return 0;
}
