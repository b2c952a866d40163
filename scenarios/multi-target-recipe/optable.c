#include "vm.h"

/* one entry per line of optable.inc */
const struct opinfo optable[] = {
#define OP(name, arity) { #name, arity },
#include "optable.inc"
#undef OP
};
const unsigned optable_len = sizeof optable / sizeof optable[0];
