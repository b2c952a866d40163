#include <stdio.h>
#include "greet.h"

size_t greet_format(char *buf, size_t len, const char *who, int formal)
{
    int n = snprintf(buf, len, "%s, %s!", greet_word(formal), who);
    return n < 0 ? 0 : (size_t)n;
}
