/* kv: a tiny key-value store in a text file. kv FILE set KEY VALUE | get KEY | count */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void)
{
    fputs("usage: kv FILE set KEY VALUE | get KEY | count\n", stderr);
    return 2;
}

int main(int argc, char **argv)
{
    char key[128], value[128];
    if (argc < 3)
        return usage();
    if (strcmp(argv[2], "set") == 0 && argc == 5) {
        FILE *f = fopen(argv[1], "a");
        if (!f)
            return 1;
        fprintf(f, "%s %s\n", argv[3], argv[4]);
        return fclose(f) != 0;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f)
        return 1;
    int n = 0, found = 0;
    while (fscanf(f, "%127s %127s", key, value) == 2) {
        n++;
        if (argc == 4 && strcmp(argv[2], "get") == 0 && strcmp(key, argv[3]) == 0) {
            printf("%s\n", value);
            found = 1;
        }
    }
    fclose(f);
    if (strcmp(argv[2], "count") == 0) {
        printf("%d\n", n);
        return 0;
    }
    return found ? 0 : 1;
}
