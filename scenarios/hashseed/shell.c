#include <stdio.h>
#include <string.h>
#include "builtins.h"

int builtin_stub(const char *name, int argc, char **argv)
{
    (void)argv;
    printf("%s: %d argument(s)\n", name, argc - 1);
    return 0;
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "pwd";
    for (const struct builtin *b = builtins; b->name; b++)
        if (strcmp(b->name, cmd) == 0)
            return b->run(argc - 1, argv + 1);
    fprintf(stderr, "%s: not a builtin\n", cmd);
    return 1;
}
