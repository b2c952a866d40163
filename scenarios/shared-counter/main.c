#include <stdio.h>
#include "msg_io.h"
#include "msg_net.h"
#include "msg_parse.h"
#include "msg_core.h"

static const int all_ids[] = {
    MSG_IO_OPEN_FAILED, MSG_IO_READ_FAILED, MSG_IO_WRITE_FAILED,
    MSG_NET_CONNECT_REFUSED, MSG_NET_TIMEOUT,
    MSG_PARSE_BAD_TOKEN, MSG_PARSE_UNEXPECTED_EOF, MSG_PARSE_TOO_DEEP, MSG_PARSE_BAD_ESCAPE,
    MSG_CORE_OUT_OF_MEMORY, MSG_CORE_INTERNAL,
};

int main(void)
{
    for (unsigned i = 0; i < sizeof all_ids / sizeof all_ids[0]; i++)
        printf("%d\n", all_ids[i]);
    return 0;
}
