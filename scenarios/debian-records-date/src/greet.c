#include <stdio.h>
#include "greeting.h"

int main(void) {
    puts(GREETING);
    return 0;
}
