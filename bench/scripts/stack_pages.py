#!/usr/bin/env python3
"""Which pages of a Moria server's fiber stacks are resident: for every stack mapping (the
read-write anonymous mappings of SIZE bytes right above a one-page guard), reads
/proc/PID/pagemap and counts resident pages by their index from the top of the stack.

  stack_pages.py PID [--stack 131072]
"""
import argparse, collections, struct

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pid", type=int)
    ap.add_argument("--stack", type=int, default=128 * 1024)
    a = ap.parse_args()
    page = 4096
    maps = []
    prev_end, prev_prot = None, None
    with open(f"/proc/{a.pid}/maps") as f:
        for line in f:
            parts = line.split()
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            prot = parts[1]
            if hi - lo == a.stack and prot.startswith("rw") and len(parts) == 5 \
                    and prev_end == lo and prev_prot == "---p":
                maps.append((lo, hi))
            prev_end, prev_prot = hi, prot
    by_index = collections.Counter()
    per_stack = collections.Counter()
    with open(f"/proc/{a.pid}/pagemap", "rb") as pm:
        for lo, hi in maps:
            n = (hi - lo) // page
            pm.seek(lo // page * 8)
            entries = struct.unpack(f"{n}Q", pm.read(n * 8))
            present = [i for i, e in enumerate(entries) if e >> 63 & 1]
            per_stack[len(present)] += 1
            for i in present:
                by_index[n - 1 - i] += 1
    print(f"{len(maps)} stacks; resident pages per stack: "
          + ", ".join(f"{k} pages x{v}" for k, v in sorted(per_stack.items())))
    print("stacks with page resident, by page index from the top (0 = top page):")
    print("  " + ", ".join(f"{k}:{v}" for k, v in sorted(by_index.items())))
    total = sum(k * v for k, v in per_stack.items())
    print(f"total {total} pages = {total * page // 1024} KiB")

main()
