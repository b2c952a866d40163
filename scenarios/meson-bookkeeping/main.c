#include <stdio.h>
#include "config.h"
int ops_scale(int x);
const char *ops_version(void);
int main(void) { printf("%s %d\n", ops_version(), ops_scale(14)); return 0; }
