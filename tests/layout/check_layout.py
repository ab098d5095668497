#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_layout.py CHECK ARGS... - the dependency rules of the tree
(docs/design.md, "Where each part lives"), checked on what the build
produced and on the sources:

  needed FILE ALLOWED...   FILE's DT_NEEDED entries are all in ALLOWED
                           (shared-object names without their version, such
                           as libc.so or libyaml-0.so): the runtime that every
                           annotated program loads carries no tool's library.
  static FILE              FILE is a statically linked executable (static or
                           static-pie): no program interpreter, no DT_NEEDED
                           entry.
  cycles TOP BUILD DOC OBJECT...
                           the files whose objects are given (nm: which file
                           defines what another one uses) depend on each other
                           in no cycle, except groups of files that DOC lists
                           as one concept (the bullets of its section "Files
                           that are one concept", each naming source paths
                           relative to TOP, `*` matching within a name).
                           A use of a name the C library defines is a use of
                           the C library, also where an interposer of the
                           tree (links.c) defines the same name: the caller
                           asked for libc's function, and the interposer
                           passes the runtime's own calls through to it.
  globs TOP                no CMake file under TOP globs sources (.c, .cc, .h)
                           outside its own directory: a component is a target
                           that others link, not a set of files they compile.
  citations TOP            every citation of the design or the house style
                           points at a file of the tree: no bare "DESIGN" or
                           "STYLE", and every "design.md §N" names a section
                           that docs/design.md has.

Exit 0 = the rule holds, 1 = it does not (each offence on one line), 77 = a
tool the check needs (readelf, nm) is missing.
"""
import fnmatch
import os
import re
import shutil
import subprocess
import sys


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def needed(path, allowed):
    if not shutil.which("readelf"):
        skip("readelf is not installed (binutils)")
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    libs = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
    bad = [lib for lib in libs if re.sub(r"\.so(\.[0-9.]+)?$", ".so", lib) not in allowed]
    for lib in bad:
        print(f"{path}: needs {lib}, which is not one of {', '.join(allowed)}")
    if not libs:
        print(f"{path}: readelf lists no NEEDED entry at all")
        return 1
    print(f"{path}: needs {', '.join(libs)}")
    return 1 if bad else 0


def static(path):
    if not shutil.which("readelf"):
        skip("readelf is not installed (binutils)")
    out = subprocess.run(["readelf", "-l", "-d", path], capture_output=True, text=True,
                         check=True).stdout
    bad = re.findall(r"\bINTERP\b|\(NEEDED\)\s+Shared library: \[[^\]]+\]", out)
    for b in bad:
        print(f"{path}: not static: {b}")
    return 1 if bad else 0


def source_of(obj, build):
    """libiosig/CMakeFiles/iosig_obj.dir/src/catalog.c.o -> libiosig/src/catalog.c
    (CMake spells a parent directory of the target's sources "__")."""
    rel = os.path.relpath(os.path.abspath(obj), os.path.abspath(build))
    m = re.match(r"^(.*?)/?CMakeFiles/[^/]+\.dir/(.*)\.o$", rel)
    if not m:
        return rel
    parts = [".." if p == "__" else p for p in m.group(2).split("/")]
    return os.path.normpath(os.path.join(m.group(1), *parts))


def concept_groups(doc):
    """The bullets of DOC's section "Files that are one concept": a list of
    (line number, [path patterns])."""
    groups, inside = [], False
    with open(doc, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.startswith("#"):
                inside = "Files that are one concept" in line
            elif inside and line.startswith("- "):
                pats = [p for p in re.findall(r"`([^`]+)`", line) if p.endswith((".c", ".cc"))]
                if pats:
                    groups.append((n, pats))
    return groups


def sccs(nodes, edges):
    """Strongly connected components (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def libc_names():
    """The functions and variables the C library this interpreter runs on
    exports (the one the tree's objects are linked against)."""
    with open("/proc/self/maps", encoding="utf-8") as f:
        paths = {line.split()[-1] for line in f if re.search(r"/libc(-[0-9.]+)?\.so", line)}
    if not paths:
        skip("the C library is not among this process's mappings (/proc/self/maps)")
    names = set()
    for path in paths:
        out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True,
                             text=True, check=True).stdout
        names.update(line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip())
    return names


def cycles(top, build, doc, objs):
    if not shutil.which("nm"):
        skip("nm is not installed (binutils)")
    libc = libc_names()
    defs, uses = {}, {}
    for obj in objs:
        src = source_of(obj, build)
        out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
        uses[src] = set()
        for line in out.splitlines():
            f = line.split()
            if len(f) == 2 and f[0] == "U" and f[1] not in libc:
                uses[src].add(f[1])
            elif len(f) == 3 and f[1] in "TDBRVWCG":
                defs[f[2]] = src
    edges = {s: {defs[u] for u in us if u in defs and defs[u] != s} for s, us in uses.items()}
    groups = concept_groups(doc)
    docname = os.path.relpath(doc, top)
    bad = 0
    for comp in sccs(sorted(uses), edges):
        if len(comp) < 2:
            continue
        home = [g for g in groups if all(any(fnmatch.fnmatchcase(c, p) for p in g[1]) for c in comp)]
        if home:
            print(f"one concept ({docname}:{home[0][0]}): {' '.join(comp)}")
            continue
        bad += 1
        print(f"cycle: {' '.join(comp)}")
        for a in comp:
            why = sorted(u for u in uses[a] if defs.get(u) in comp and defs[u] != a)
            print(f"  {a} uses {', '.join(f'{u} ({defs[u]})' for u in why)}")
    if bad:
        print(f"{bad} cycle(s) between files that {docname} does not list as one concept: "
              "move what both sides use into a file of its own, or list the files under "
              "\"Files that are one concept\" with the reason")
    else:
        print(f"{len(uses)} files, no cycle outside the groups {docname} lists")
    return 1 if bad else 0


def tree_files(top, exts=None, names=None):
    """The files of the source tree (no build directories, no .git, no data/)."""
    for d, dirs, files in os.walk(top):
        rel = os.path.relpath(d, top)
        dirs[:] = [x for x in dirs if not (rel == "." and (x.startswith("build") or x in ("data",)))
                   and not x.startswith(".")]
        for f in files:
            if (names and f in names) or (exts and f.endswith(exts)):
                yield os.path.join(d, f)


def globs(top):
    bad = 0
    n = 0
    for path in sorted(tree_files(top, exts=(".cmake",), names=("CMakeLists.txt",))):
        text = open(path, encoding="utf-8").read()
        for m in re.finditer(r"file\(\s*GLOB(?:_RECURSE)?\b([^)]*)\)", text):
            n += 1
            for arg in m.group(1).split():
                if not re.search(r"\.(c|cc|cpp|h)$", arg):
                    continue
                own = arg.startswith("${CMAKE_CURRENT_SOURCE_DIR}/") or not (
                    arg.startswith("$") or arg.startswith("/"))
                if own and ".." not in arg:
                    continue
                bad += 1
                line = text.count("\n", 0, m.start()) + 1
                print(f"{os.path.relpath(path, top)}:{line}: globs {arg}, outside its own "
                      "directory: link the target that owns those sources instead")
    print(f"{n} file(GLOB) calls, {bad} outside their own directory")
    return 1 if bad else 0


def citations(top):
    design = os.path.join(top, "docs", "design.md")
    if not os.path.exists(design):
        print("docs/design.md is missing")
        return 1
    sections = set()
    for line in open(design, encoding="utf-8"):
        m = re.match(r"^#{2,4} (\d+(?:\.\d+)*)\.? ", line)
        if m:
            sections.add(m.group(1))
    bad = 0
    exts = (".c", ".cc", ".h", ".md", ".txt", ".cmake", ".sh", ".py", ".in", ".yaml", ".map",
            ".1", ".3", ".5", ".7")
    for path in sorted(tree_files(top, exts=exts, names=("CMakeLists.txt",))):
        rel = os.path.relpath(path, top)
        if os.path.abspath(path) == os.path.abspath(__file__):
            continue  # this checker names what it looks for
        try:
            text = open(path, encoding="utf-8").read()
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            for m in re.finditer(r"(?<![A-Za-z0-9_])(DESIGN|STYLE)(?![A-Za-z0-9_])", line):
                bad += 1
                print(f"{rel}:{n}: cites {m.group(1)}, which is not a file of the tree: "
                      "cite docs/design.md §N or docs/style.md")
        # A citation may break across a line: "design.md\n * §3".
        for m in re.finditer(r"design\.md(?:\]\(design\.md\))?[\s*#/]*((?:§[0-9.]+(?:,\s*|\s+and\s+)?)+)", text):
            for sec in re.findall(r"§([0-9]+(?:\.[0-9]+)*)", m.group(1)):
                sec = sec.rstrip(".")
                if sec not in sections:
                    bad += 1
                    line = text.count("\n", 0, m.start()) + 1
                    print(f"{rel}:{line}: cites docs/design.md §{sec}, which it does not have")
    print(f"{len(sections)} sections in docs/design.md; {bad} bad citation(s)")
    return 1 if bad else 0


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    if argv[1] == "needed" and len(argv) >= 4:
        return needed(argv[2], argv[3:])
    if argv[1] == "static" and len(argv) == 3:
        return static(argv[2])
    if argv[1] == "cycles" and len(argv) >= 6:
        return cycles(argv[2], argv[3], argv[4], argv[5:])
    if argv[1] == "globs" and len(argv) == 3:
        return globs(argv[2])
    if argv[1] == "citations" and len(argv) == 3:
        return citations(argv[2])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
