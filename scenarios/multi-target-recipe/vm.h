struct opinfo {
    const char *name;
    int arity;
};
extern const struct opinfo optable[];
extern const unsigned optable_len;
extern const char *const opnames[];
extern const unsigned opnames_len;
