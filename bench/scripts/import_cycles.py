#!/usr/bin/env python3
"""Import cycles inside each workspace crate, read from the `use` lines and inline paths.

Each source file is a module; `use crate::a::b::C`, `super::x` and inline `crate::a::f()` paths
are edges to the longest module prefix that is a file. Test code is left out (files named
`tests.rs`, everything after a `#[cfg(test)]`). A parent module's `mod`/`pub use` of its own
children is declaration, not an import, and is not an edge. Prints each strongly connected
component of two or more modules, per crate, at two levels: files, and top-level modules.

    python3 bench/scripts/import_cycles.py            # every crate
    python3 bench/scripts/import_cycles.py http orm   # some
Exits 1 when a cycle is found.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CRATES = ["runtime", "streams", "crypto", "http", "orm", "examples", "bench"]


def modules(src):
    """Map module path (tuple) -> file for every .rs under src."""
    mods = {}
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            full = os.path.join(dirpath, f)
            rel = os.path.relpath(full, src)[:-3].split(os.sep)
            if rel[0] == "bin" and os.path.basename(src) == "src":
                continue
            if rel[-1] in ("mod", "lib", "main"):
                rel = rel[:-1]
            if rel and rel[-1] == "tests":
                continue
            mods[tuple(rel)] = full
    return mods


def strip(text):
    text = text.split("#[cfg(test)]")[0]
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return text


def expand_use(body):
    """Expand a use tree `a::{b, c::{d}}` into paths."""
    body = body.strip()
    m = re.match(r"^(.*?)\{(.*)\}$", body, re.S)
    if not m:
        return [body.split(" as ")[0].strip()]
    prefix, inner = m.group(1), m.group(2)
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        if p.strip():
            out += [prefix + q for q in expand_use(p)]
    return out


def resolve(path, here, mods):
    segs = [s for s in path.replace(" ", "").split("::") if s]
    if not segs:
        return None
    if segs[0] == "crate":
        base, segs = (), segs[1:]
    elif segs[0] in ("super", "self"):
        base = here
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                base = base[:-1]
            segs = segs[1:]
    else:
        return None
    best = None
    for i in range(len(segs) + 1):
        cand = base + tuple(segs[:i])
        if cand in mods:
            best = cand
    return best


def roots(crate):
    """The crate's library source folder and each multi-file binary's folder."""
    src = os.path.join(ROOT, crate, "src")
    out = [(crate, src)]
    bins = os.path.join(src, "bin")
    if os.path.isdir(bins):
        for b in sorted(os.listdir(bins)):
            if os.path.isfile(os.path.join(bins, b, "main.rs")):
                out.append((f"{crate} bin {b}", os.path.join(bins, b)))
    return out


def graph(src):
    mods = modules(src)
    edges = {m: set() for m in mods}
    for mod, f in mods.items():
        text = strip(open(f).read())
        for um in re.finditer(r"\b(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", text):
            public = bool(um.group(1))
            for p in expand_use(um.group(2)):
                t = resolve(p, mod, mods)
                if t is None or t == mod:
                    continue
                if public and t[: len(mod)] == mod:
                    continue  # a parent re-exporting its child
                edges[mod].add(t)
        for im in re.finditer(r"\b((?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)+)", text):
            t = resolve(im.group(1), mod, mods)
            if t is not None and t != mod:
                edges[mod].add(t)
    return mods, edges


def sccs(edges):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def name(m):
    return "::".join(m) or "crate"


def main():
    found = False
    for crate, src in [r for c in sys.argv[1:] or CRATES for r in roots(c)]:
        mods, edges = graph(src)
        top = {}
        for a, ts in edges.items():
            for b in ts:
                if a[:1] != b[:1] and a and b:
                    top.setdefault(a[:1], set()).add(b[:1])
        for level, g in (("files", edges), ("top-level modules", top)):
            for comp in sccs(g):
                found = True
                print(f"{crate}: cycle among {level}: {', '.join(name(m) for m in comp)}")
    if not found:
        print("no import cycles")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
