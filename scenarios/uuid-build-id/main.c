#include <stdio.h>
#include "buildid.h"

int main(void)
{
    printf("%s %s (build %s)\n", TOOL_NAME, TOOL_VERSION, TOOL_BUILD_ID);
    return 0;
}
