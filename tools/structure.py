#!/usr/bin/env python3
"""The shape of src/: import cycles between files, the largest files and
the longest functions, counting product code only (a file's
`#[cfg(test)] mod tests` is left out). docs/architecture.md holds the
bounds it is read against: no cycle, no file over 800 lines, no function
over 80.

    python3 tools/structure.py            # a report
    python3 tools/structure.py --json     # the same as JSON
"""
import json
import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
MAX_FILE, MAX_FN = 800, 80


def module_of(path):
    """`ops::consolidate` for src/ops/consolidate.rs, `ops` for src/ops/mod.rs."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "mod":
        parts.pop()
    return "::".join(parts) if parts and parts != ["lib"] else "crate"


def product(text):
    """The file's text up to its test module."""
    m = re.search(r"^#\[cfg\(test\)\]\s*\nmod tests \{", text, re.M)
    return text[: m.start()] if m else text


def imports(mod, text, modules):
    """The modules of the crate a file names (`crate::a::b`, `super::x`)."""
    found = set()
    for path in re.findall(r"\bcrate::((?:\w+::)*\w+)", text):
        parts = path.split("::")
        for n in range(len(parts), 0, -1):
            cand = "::".join(parts[:n])
            if cand in modules:
                found.add(cand)
                break
    parent = mod.rsplit("::", 1)[0] if "::" in mod else "crate"
    for name in re.findall(r"\bsuper::(\w+)", text):
        cand = f"{parent}::{name}" if parent != "crate" else name
        if cand in modules:
            found.add(cand)
    found.discard(mod)
    # A module's own parent (its mod.rs) is its room, not an import.
    return {m for m in found if not mod.startswith(m + "::")}


def cycles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
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
    for v in graph:
        if v not in index:
            visit(v)
    return out


def bare(line):
    """A line without its comment, strings and char literals (their braces
    are no blocks)."""
    line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(?:\\.|[^'\\])'", "''", line)
    return line.split("//", 1)[0]


def long_functions(rel, text):
    """Functions whose body runs past MAX_FN lines: (file, name, lines)."""
    out = []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?fn\s+(\w+)", line)
        if not m or line.rstrip().endswith(";"):
            continue
        depth, started = 0, False
        for j in range(i, len(lines)):
            code = bare(lines[j])
            depth += code.count("{") - code.count("}")
            started |= "{" in code
            if started and depth <= 0:
                if j - i + 1 > MAX_FN:
                    out.append((rel, m.group(1), j - i + 1))
                break
    return out


def main():
    # Test-only files (`#[cfg(test)] mod tests;`, `mod testing;`) are no
    # product code.
    files = sorted(f for f in SRC.rglob("*.rs") if f.name not in ("tests.rs", "testing.rs"))
    texts = {f: product(f.read_text()) for f in files}
    modules = {module_of(f) for f in files}
    graph = {module_of(f): imports(module_of(f), t, modules) for f, t in texts.items()}
    report = {
        "files": len(files),
        "cycles": cycles(graph),
        "largest_files": sorted(
            ((t.count("\n"), str(f.relative_to(SRC))) for f, t in texts.items()), reverse=True
        )[:8],
        "long_functions": [
            x for f, t in texts.items() for x in long_functions(str(f.relative_to(SRC)), t)
        ],
    }
    if "--json" in sys.argv:
        print(json.dumps(report))
        return
    print(f"{report['files']} files; cycles: {report['cycles'] or 'none'}")
    print(f"largest files (product lines; bound {MAX_FILE}):")
    for n, f in report["largest_files"]:
        print(f"  {n:6}  {f}{'  over' if n > MAX_FILE else ''}")
    print(f"functions over {MAX_FN} lines: {len(report['long_functions'])}")
    for f, name, n in report["long_functions"]:
        print(f"  {n:6}  {f}  {name}")


if __name__ == "__main__":
    main()
