#ifndef GREET_H
#define GREET_H
#include <stddef.h>
const char *greet_word(int formal);
size_t greet_format(char *buf, size_t len, const char *who, int formal);
#endif
