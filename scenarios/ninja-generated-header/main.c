#include <stdio.h>
#include "app_features.h"

int main(void)
{
    printf("features: %s (simd=%d threads=%d)\n", FEATURE_STRING, HAVE_SIMD, HAVE_THREADS);
    return 0;
}
