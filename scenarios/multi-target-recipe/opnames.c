#include "vm.h"

const char *const opnames[] = {
#include "opnames.inc"
};
const unsigned opnames_len = sizeof opnames / sizeof opnames[0];
