#include "ring.h"

void ring_init(struct ring *r, double *storage, size_t cap)
{
    r->items = storage;
    r->cap = cap;
    r->head = r->len = 0;
}

void ring_push(struct ring *r, double x)
{
    r->items[(r->head + r->len) % r->cap] = x;
    if (r->len < r->cap)
        r->len++;
    else
        r->head = (r->head + 1) % r->cap;
}

double ring_get(const struct ring *r, size_t i)
{
    return r->items[(r->head + i) % r->cap];
}
