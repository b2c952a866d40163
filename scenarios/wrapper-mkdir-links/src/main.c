#include <stdio.h>
#include "headers.h"
int main(void) { printf("%d %s\n", alpha() + beta(), pages[0]); return 0; }
