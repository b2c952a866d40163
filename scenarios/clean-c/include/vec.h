#ifndef VEC_H
#define VEC_H
struct vec { double x, y, z; };
struct vec vec_add(struct vec a, struct vec b);
struct vec vec_scale(struct vec a, double k);
double vec_dot(struct vec a, struct vec b);
double vec_norm(struct vec a);
#endif
