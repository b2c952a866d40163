#ifndef RING_H
#define RING_H
#include <stddef.h>

struct ring {
    double *items;
    size_t cap, head, len;
};

void ring_init(struct ring *r, double *storage, size_t cap);
void ring_push(struct ring *r, double x);
double ring_get(const struct ring *r, size_t i);
double ring_mean(const struct ring *r);
double ring_stddev(const struct ring *r);
#endif
