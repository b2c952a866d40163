#include <stdint.h>

int64_t nnp_fft16x16_with_offset(int64_t x);

/* the library's entry point: deterministic */
int64_t nnp_transform(int64_t x)
{
    return nnp_fft16x16_with_offset(x) + 1;
}
