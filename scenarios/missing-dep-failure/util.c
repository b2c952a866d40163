#include "util.h"

int square(int x)
{
    return x * x;
}
