#include <stdio.h>
#include <string.h>
#include "calc.h"

int yyparse(long *result);

int calc_apply(const char *op, long *acc, long rhs)
{
    if (strcmp(op, "+") == 0) *acc += rhs;
    else if (strcmp(op, "-") == 0) *acc -= rhs;
    else if (strcmp(op, "*") == 0) *acc *= rhs;
    else if (strcmp(op, "**") == 0) {
        long base = *acc;
        for (*acc = 1; rhs-- > 0;)
            *acc *= base;
    } else if (rhs == 0) {
        fputs("division by zero\n", stderr);
        return 1;
    } else if (strcmp(op, "/") == 0) *acc /= rhs;
    else *acc %= rhs;
    return 0;
}

int main(int argc, char **argv)
{
    int status = 0;
    for (int i = 1; i < argc; i++) {
        long value;
        lexer_input(argv[i]);
        if (yyparse(&value) == 0)
            printf("%s = %ld\n", argv[i], value);
        else
            status = 1;
    }
    return status;
}
