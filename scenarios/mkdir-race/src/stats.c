#include <math.h>
#include "ring.h"

double ring_mean(const struct ring *r)
{
    double sum = 0;
    for (size_t i = 0; i < r->len; i++)
        sum += ring_get(r, i);
    return r->len ? sum / r->len : 0;
}

double ring_stddev(const struct ring *r)
{
    double mean = ring_mean(r), sq = 0;
    for (size_t i = 0; i < r->len; i++) {
        double d = ring_get(r, i) - mean;
        sq += d * d;
    }
    return r->len > 1 ? sqrt(sq / (r->len - 1)) : 0;
}
