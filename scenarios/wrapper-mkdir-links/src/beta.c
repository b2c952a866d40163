#include "headers.h"
int beta(void) { return PAGE_COUNT * 2; }
