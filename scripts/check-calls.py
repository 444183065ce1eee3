#!/usr/bin/env python3
"""check-calls.py -- checks the calls between the library's files, as the
linker sees them (docs/conventions.md, "Layers").

Reads the object files of a build (`nm` on each .o under
BUILD/CMakeFiles/fleet_objects.dir) and draws an arrow from file A to file
B when A uses a symbol that B defines. Then checks two rules:

  1. no circle: no set of two or more files in which each reaches the
     others by arrows (a hub that switches on a request kind and calls back
     into its spokes makes one);
  2. arrows run one way, down the floors: a primitive (src/<primitive>/)
     may call the core, the backend interface and the leaves; the core
     (src/core/) the backend interface and the leaves; an adapter
     (adapters/) only adapters and the leaves (src/common/). A primitive
     may call another primitive only through the public API (fleet_*
     names, never fleet__ ones).

Prints one line per circle or wrong-way arrow and exits 1 when there is
any; with --draw, prints every arrow ("a -> b: symbol, ...") first.
Usage: python3 scripts/check-calls.py [--draw] BUILD_DIR (from the
repository root)
"""
import os
import subprocess
import sys


def floor(path):
    """The floor of a source file and its folder: (rank, folder)."""
    parts = path.split('/')
    if parts[0] == 'src' and parts[1] == 'common':
        return 0, 'src/common'
    if parts[0] == 'adapters':
        return 1, 'adapters'
    if parts[0] == 'src' and parts[1] == 'core':
        return 2, 'src/core'
    if parts[0] == 'src':
        return 3, 'src/' + parts[1]
    return 4, parts[0]


def symbols(obj):
    """The global symbols an object file defines and those it uses."""
    out = subprocess.run(['nm', obj], check=True, capture_output=True,
                         text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == 'U':
            used.add(f[1])
        elif len(f) == 3 and f[1] in 'TDBRCVW':
            defined.add(f[2])
    return defined, used


def circles(nodes, edges):
    """The strongly connected sets of two or more nodes (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
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

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main(argv):
    draw = '--draw' in argv
    args = [a for a in argv if a != '--draw']
    if len(args) != 1:
        sys.stderr.write(__doc__)
        return 2
    root = os.path.join(args[0], 'CMakeFiles', 'fleet_objects.dir')
    if not os.path.isdir(root):
        sys.stderr.write('check-calls.py: no %s (build first)\n' % root)
        return 2
    objs = {}
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith('.c.o'):
                obj = os.path.join(d, f)
                src = os.path.relpath(obj, root)[:-2]
                # An object whose source is gone (moved or removed since
                # the build dir was made) is left out.
                if src.startswith(('src/', 'adapters/')) and \
                        os.path.isfile(src):
                    objs[src] = symbols(obj)
    owner = {}
    for src, (defined, _) in objs.items():
        for s in defined:
            owner[s] = src
    edges, why = {}, {}
    for src, (_, used) in objs.items():
        for s in used:
            dst = owner.get(s)
            if dst is None or dst == src:
                continue
            edges.setdefault(src, set()).add(dst)
            why.setdefault((src, dst), set()).add(s)
    bad = 0
    if draw:
        for (a, b), syms in sorted(why.items()):
            print('%s -> %s: %s' % (a, b, ', '.join(sorted(syms))))
    for comp in circles(objs, edges):
        print('circle: ' + ' <-> '.join(comp))
        bad += 1
    for (a, b), syms in sorted(why.items()):
        (ra, fa), (rb, fb) = floor(a), floor(b)
        if rb > ra:
            print('%s -> %s: a call up the floors (%s)' %
                  (a, b, ', '.join(sorted(syms))))
            bad += 1
        elif ra == rb == 3 and fa != fb:
            inner = sorted(s for s in syms if s.startswith('fleet__'))
            if inner:
                print('%s -> %s: another primitive\'s internals (%s)' %
                      (a, b, ', '.join(inner)))
                bad += 1
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
