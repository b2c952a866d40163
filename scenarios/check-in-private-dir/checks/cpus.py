"""Check: how many CPUs this process may run on, recorded as the default thread count."""
import os

with open("cpus.h", "w", encoding="utf-8") as f:
    f.write(f"#define DEFAULT_THREADS {len(os.sched_getaffinity(0))}\n")
