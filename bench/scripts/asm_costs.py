#!/usr/bin/env python3
"""Instructions executed per machine instruction of the functions whose name contains PATTERN,
from a callgrind profile taken with `--dump-instr=yes` (bench/scripts/callgrind.sh with
CALLGRIND_OPTS=--dump-instr=yes), printed beside objdump's disassembly: where a hot function's
instructions go when its source lines are inlined past telling apart.

    bench/scripts/asm_costs.py PROFILE BINARY PATTERN [DIVISOR]

DIVISOR (e.g. the request count) scales every count; lines below 0.5 after scaling are dropped.
"""
import re
import subprocess
import sys
from collections import defaultdict


def costs(profile, pattern):
    """Self cost per instruction address of every function whose name holds `pattern`, and the
    source line (file:line, inlined code included) each address belongs to."""
    names, files, out, where = {}, {}, defaultdict(int), {}
    fn_match, addr, line_no, skip_next, cur_file = False, 0, 0, False, "?"

    def step(pos, prev):
        if pos == "*":
            return prev
        if pos[0] in "+-":
            n = int(pos[1:], 16) if pos[1:].startswith("0x") else int(pos[1:])
            return prev + n if pos[0] == "+" else prev - n
        return int(pos, 16) if pos.startswith("0x") else int(pos)

    with open(profile) as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"^(c?)fn=\((\d+)\)(?: (.*))?$", line)
            if m:
                if m.group(3):
                    names[m.group(2)] = m.group(3)
                if not m.group(1):
                    fn_match = pattern in names.get(m.group(2), "")
                continue
            m = re.match(r"^(fl|fi|fe)=\((\d+)\)(?: (.*))?$", line)
            if m:
                if m.group(3):
                    files[m.group(2)] = m.group(3)
                cur_file = files.get(m.group(2), "?")
                continue
            if line.startswith("calls="):
                skip_next = True  # the next line is the call's inclusive cost
                continue
            if not line or line[0] not in "+-*0123456789":
                continue
            parts = line.split()
            addr = step(parts[0], addr)
            if len(parts) > 1:
                line_no = step(parts[1], line_no)
            if skip_next:
                skip_next = False
                continue
            if fn_match and len(parts) >= 3:
                out[addr] += int(parts[2])
                where[addr] = f"{cur_file.rsplit('/', 2)[-2:][-1]}:{line_no}"
    return out, where


def main():
    profile, binary, pattern = sys.argv[1:4]
    divisor = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
    by_addr, where = costs(profile, pattern)
    if not by_addr:
        sys.exit(f"no cost for a function matching {pattern!r}")
    # A PIE's profile holds run-time addresses: find the load offset from the symbol table.
    lo, hi = min(by_addr), max(by_addr)
    dump = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", binary],
                          capture_output=True, text=True, check=True).stdout
    insns = {}
    for line in dump.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\s+(.*)$", line)
        if m:
            insns[int(m.group(1), 16)] = m.group(2)
    base = 0
    if lo not in insns:
        for b in (0x0, 0x108000, 0x400000, 0x4000000, 0x555555554000):
            if all((a - b) in insns for a in list(by_addr)[:50]):
                base = b
                break
    total = sum(by_addr.values())
    print(f"{total / divisor:.1f} per unit in functions matching {pattern!r}")
    for a in sorted(by_addr):
        c = by_addr[a] / divisor
        if c >= 0.5:
            print(f"{c:8.1f}  {a - base:x}  {where[a]:<28} {insns.get(a - base, '?')}")


main()
