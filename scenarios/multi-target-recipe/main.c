#include <stdio.h>
#include "opcodes.h"
#include "vm.h"

/* Run a small program: print (3 + 4) * 5. */
int main(void)
{
    static const int prog[] = { OP_PUSH, 3, OP_PUSH, 4, OP_ADD, OP_PUSH, 5, OP_MUL, OP_PRINT, OP_HALT };
    int stack[16], sp = 0;
    printf("%u opcodes (%u names, %d declared)\n", optable_len, opnames_len, OP_COUNT_DECLARED);
    for (unsigned pc = 0;;) {
        int op = prog[pc++];
        if (op < 0 || (unsigned)op >= optable_len) {
            printf("bad opcode %d\n", op);
            return 1;
        }
        switch (op) {
        case OP_PUSH: stack[sp++] = prog[pc++]; break;
        case OP_ADD: sp--; stack[sp - 1] += stack[sp]; break;
        case OP_MUL: sp--; stack[sp - 1] *= stack[sp]; break;
        case OP_PRINT: printf("%s -> %d\n", opnames[op], stack[sp - 1]); break;
        case OP_HALT: return 0;
        default: printf("unimplemented %s\n", optable[op].name); return 1;
        }
    }
}
