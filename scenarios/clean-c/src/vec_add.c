#include "vec.h"

struct vec vec_add(struct vec a, struct vec b)
{
    struct vec r = { a.x + b.x, a.y + b.y, a.z + b.z };
    return r;
}

struct vec vec_scale(struct vec a, double k)
{
    struct vec r = { a.x * k, a.y * k, a.z * k };
    return r;
}
