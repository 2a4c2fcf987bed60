#!/usr/bin/env python3
"""arch_calls.py BUILDDIR: the file-level call graph of the daemon library
(emu/liburoced.la) has no cycle and no call up the layers (docs/architecture.md,
"Call rule"): the object model (emu/obj) calls neither the NIC nor the
control plane, the NIC (emu/nic, emu/eth, emu/mcast) does not call the
control plane (emu/ctl, emu/cm); layers as tests/arch_layering.py names them.

Each object file emu/**/.libs/liburoced_la-NAME.o stands for its source
file; an edge A -> B means A references (nm: U) a symbol B defines (nm: T,
D, R, B). Prints every cycle found as "call cycle: a.c -> b.c -> a.c" and
every upward edge as "call up: a.c (nic) -> b.c (ctl)" and exits 1, or
prints a summary line and exits 0. Exits 2 when no object file
is found (the library is not built).
"""
import glob
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from arch_layering import layer  # noqa: E402

# Daemon layers, lowest first (tests/arch_layering.py).
RANK = {'xport': 0, 'netstack': 0, 'log': 0, 'objects': 1, 'nic': 2, 'ctl': 3}


def graph(builddir):
    defs, refs = {}, {}
    pat = os.path.join(builddir, 'emu', '**', '.libs', 'liburoced_la-*.o')
    for obj in sorted(glob.glob(pat, recursive=True)):
        folder = os.path.relpath(obj.split('/.libs/')[0], builddir)
        src = '%s/%s.c' % (folder, os.path.basename(obj)[len('liburoced_la-'):-2])
        refs[src] = set()
        out = subprocess.run(['nm', obj], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in 'TDRB':
                defs[f[2]] = src
            elif len(f) == 2 and f[0] == 'U':
                refs[src].add(f[1])
    return {a: sorted({defs[s] for s in r if s in defs and defs[s] != a})
            for a, r in refs.items()}


def cycles(g):
    found, state, stack = [], {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in g.get(n, ()):
            if state.get(m) == 1:
                found.append(stack[stack.index(m):] + [m])
            elif m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in sorted(g):
        if n not in state:
            visit(n)
    return found


def main(builddir):
    g = graph(builddir)
    if not g:
        print('no emu/**/.libs/liburoced_la-*.o under %s' % builddir)
        return 2
    found = cycles(g)
    for c in found:
        print('call cycle: ' + ' -> '.join(c))
    up = [(a, b) for a in sorted(g) for b in g[a]
          if RANK.get(layer(b), 0) > RANK.get(layer(a), 0)]
    for a, b in up:
        print('call up: %s (%s) -> %s (%s)' % (a, layer(a), b, layer(b)))
    if found or up:
        return 1
    print('%d files, %d calls between files: no call cycle, none up the layers'
          % (len(g), sum(len(v) for v in g.values())))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else '.'))
