#include <stdio.h>
#include "vec.h"
#include "stats.h"

int main(void)
{
    struct vec a = { 1, 2, 3 }, b = { 4, 5, 6 };
    double norms[3] = { vec_norm(a), vec_norm(b), vec_norm(vec_add(a, vec_scale(b, 2))) };
    printf("dot=%g mean=%g var=%g\n", vec_dot(a, b), stats_mean(norms, 3), stats_var(norms, 3));
    return 0;
}
