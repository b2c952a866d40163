struct builtin {
    const char *name;
    int (*run)(int argc, char **argv);
};
extern const struct builtin builtins[];
int builtin_stub(const char *name, int argc, char **argv);
