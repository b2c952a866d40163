#include "config.h"
int ops_scale(int x) { return x * OPS_SCALE; }
const char *ops_version(void) { return OPS_VERSION; }
