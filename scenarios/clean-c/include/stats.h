#ifndef STATS_H
#define STATS_H
#include <stddef.h>
double stats_mean(const double *v, size_t n);
double stats_var(const double *v, size_t n);
#endif
