#include "headers.h"
int alpha(void) { return PAGE_COUNT; }
