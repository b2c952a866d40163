struct plugin {
    const char *name;
    unsigned magic;
};
extern const struct plugin plugins[];
extern const int n_plugins;
