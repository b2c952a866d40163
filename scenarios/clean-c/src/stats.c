#include "stats.h"

double stats_mean(const double *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return n ? s / n : 0;
}

double stats_var(const double *v, size_t n)
{
    double m = stats_mean(v, n), s = 0;
    for (size_t i = 0; i < n; i++)
        s += (v[i] - m) * (v[i] - m);
    return n ? s / n : 0;
}
