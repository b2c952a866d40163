/* a tiny evaluator of + - * / over integers, left to right */
extern const char *const token_names[];
extern const int token_count;

int eval_left_to_right(const int *vals, const char *ops, int n) {
    int acc = vals[0], i;
    for (i = 1; i < n; i++) {
        switch (ops[i - 1]) {
        case '+': acc += vals[i]; break;
        case '-': acc -= vals[i]; break;
        case '*': acc *= vals[i]; break;
        case '/': acc = vals[i] ? acc / vals[i] : 0; break;
        }
    }
    return acc;
}

const char *token_name(int t) {
    return t >= 0 && t < token_count ? token_names[t] : "?";
}
