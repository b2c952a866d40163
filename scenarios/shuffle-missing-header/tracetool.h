#ifndef TRACETOOL_H
#define TRACETOOL_H
int probe_attach(int id);
int bpf_load(const char *name, int pages);
void output_line(const char *what, int value);
#endif
