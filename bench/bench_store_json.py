"""A manifest through the store's JSON: msgspec structs against the json module.

    python bench/bench_store_json.py            # 1,000 / 20,000 / 100,000 entries, 9 reps each
    python bench/bench_store_json.py --smoke    # 1,000 entries, 3 reps: < 5 s (CI)

For each size, one campaign run's manifest (paths like `dir17/file4242.o`, sha256 digests)
is encoded to the bytes the store compresses, and those bytes decoded back to entries:
(A) `fuzzer.structs.encode` / `decode` (msgspec: Entry is an array_like struct), against
(B) what buildfuzz did before the structs: a list per entry, `json.dumps`, then
`json.loads` and `Entry(*value)` per entry. Both are timed in ABBA order in one run;
read the ratios (A/B, below 1 is faster), not the seconds. zlib's share, the same in
both, is left out.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzzer import structs  # noqa: E402
from fuzzer.observe import Entries, Entry  # noqa: E402


def manifest(size: int) -> dict[str, Entry]:
    return {f"dir{i % 100}/file{i}.o": Entry("file", f"{i:064x}", i % 3 == 0, 10 * i, 1_700_000_000 * 10**9 + i)
            for i in range(size)}


def structs_way(entries: dict[str, Entry]) -> tuple[bytes, dict[str, Entry]]:
    data = structs.encode(entries)
    return data, structs.decode(data, Entries)


def json_way(entries: dict[str, Entry]) -> tuple[bytes, dict[str, Entry]]:
    data = json.dumps({p: [e.kind, e.digest, e.executable, e.size, e.mtime_ns] for p, e in entries.items()}).encode()
    return data, {p: Entry(*value) for p, value in json.loads(data).items()}


def timed(way, entries) -> float:
    started = time.perf_counter()
    _, back = way(entries)
    elapsed = time.perf_counter() - started
    assert back == entries
    return elapsed


def compare(size: int, reps: int) -> None:
    entries = manifest(size)
    times: dict[str, list[float]] = {"structs": [], "json": []}
    for rep in range(reps):
        order = ("structs", "json") if rep % 2 == 0 else ("json", "structs")
        for name in order:
            times[name].append(timed(structs_way if name == "structs" else json_way, entries))
    a, b = statistics.median(times["structs"]), statistics.median(times["json"])
    sizes = len(structs_way(entries)[0]), len(json_way(entries)[0])
    print(f"{size:>7} entries  structs {a * 1000:8.1f} ms  json {b * 1000:8.1f} ms  ratio {a / b:5.2f}  "
          f"bytes {sizes[0]:>10} vs {sizes[1]:>10}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="1,000 entries, 3 reps")
    parser.add_argument("--reps", type=int, default=9)
    args = parser.parse_args()
    sizes, reps = ((1_000,), 3) if args.smoke else ((1_000, 20_000, 100_000), args.reps)
    print("encode + decode of one manifest, medians (ratio = structs / json)")
    for size in sizes:
        compare(size, reps)


if __name__ == "__main__":
    main()
