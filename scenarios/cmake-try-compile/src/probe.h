int probe_sum(int a, int b);
