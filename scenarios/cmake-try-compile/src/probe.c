#include "probe.h"

int probe_sum(int a, int b) { return a + b; }
