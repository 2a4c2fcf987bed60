#!/usr/bin/env python3
"""arch_calls.py BUILDDIR: the file-level call graph of the daemon library
(emu/liburoced.la) has no cycle (docs/architecture.md, "Call rule").

Each object file emu/**/.libs/liburoced_la-NAME.o stands for its source
file; an edge A -> B means A references (nm: U) a symbol B defines (nm: T,
D, R, B). Prints every cycle found as "call cycle: a.c -> b.c -> a.c" and
exits 1, or prints a summary line and exits 0. Exits 2 when no object file
is found (the library is not built).
"""
import glob
import os
import subprocess
import sys


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
    if found:
        return 1
    print('%d files, %d calls between files: no call cycle'
          % (len(g), sum(len(v) for v in g.values())))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else '.'))
