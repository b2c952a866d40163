#ifndef CALC_H
#define CALC_H
void lexer_input(const char *text);
int calc_apply(const char *op, long *acc, long rhs);
#endif
