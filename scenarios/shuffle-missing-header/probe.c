#include "config.h"
#include "tracetool.h"

int probe_attach(int id)
{
    return id < TT_MAX_PROBES ? id : -1;
}

int main(void)
{
    output_line("probe", probe_attach(3));
    output_line("ring", bpf_load("sched", TT_RING_PAGES));
    return 0;
}
