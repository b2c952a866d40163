#include <stdio.h>
#include "tokens.h"

int eval_left_to_right(const int *vals, const char *ops, int n);
const char *token_name(int t);
extern const int token_count;

int main(void) {
    int vals[] = {6, 7, 2};
    printf("%s %s: %d\n", token_name(TOK_NUM), token_name(TOK_STAR),
           eval_left_to_right(vals, "*-", 3));
    printf("%d tokens (%d declared)\n", token_count, TOK_COUNT_DECLARED);
    return 0;
}
