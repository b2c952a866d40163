#include <string.h>
#include "keywords.h"

static const char *const names[] = {
    "let", "if", "then", "else", "print", "while", "do", "end",
};

int lookup(const char *word)
{
    for (int i = 0; i < TOK_COUNT; i++)
        if (strcmp(word, names[i]) == 0)
            return i;
    return -1;
}
