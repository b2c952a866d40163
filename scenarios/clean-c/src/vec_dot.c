#include <math.h>
#include "vec.h"

double vec_dot(struct vec a, struct vec b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

double vec_norm(struct vec a)
{
    return sqrt(vec_dot(a, a));
}
