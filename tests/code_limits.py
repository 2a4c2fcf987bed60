#!/usr/bin/env python3
"""code_limits.py ROOT: size limits of the source (not the tests).

  - no .c/.h file under emu/, provider/, netstack/, include/, tools/ over
    MAX_LINES (800) lines;
  - no top-level function in those .c files over MAX_FUNC (120) lines.

A function is found by a brace-counting heuristic: a line at depth 0 that
ends a declarator with ")" and is followed by a "{" at column 0 opens a body
(the K&R-less style of the tree: "{" on its own line after the signature);
the body runs to the "}" that brings the depth back to 0. Its length is
counted from the "{" line to the "}" line. Braces inside string and
character literals and comments are ignored. Prints one line per violation
and exits 1, or a summary and exits 0.
"""
import os
import re
import sys

MAX_LINES = 800
MAX_FUNC = 120
ROOTS = ('emu', 'provider', 'netstack', 'include', 'tools')
STRIP = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|//[^\n]*|/\*.*?\*/',
                   re.S)


def blank(m):
    # keep newlines so line numbers hold
    return re.sub(r'[^\n]', ' ', m.group(0))


def functions(text):
    """Yield (name, first_line, n_lines) of each top-level function body."""
    lines = STRIP.sub(blank, text).split('\n')
    depth, start, name, prev = 0, None, None, ''
    for i, line in enumerate(lines, 1):
        if depth == 0 and line.startswith('{') and prev.rstrip().endswith(')'):
            start = i
            m = re.search(r'(\w+)\s*\(', sig)
            name = m.group(1) if m else '?'
        for ch in line:
            if ch == '{':
                depth += 1
            elif ch == '}':
                depth -= 1
                if depth == 0 and start is not None:
                    yield name, start, i - start + 1
                    start = None
        if depth == 0 and line.strip():
            # the signature may span lines: remember from its first line
            sig = line if not prev.rstrip().endswith(',') else sig + line
            prev = line
    return


def sources(root):
    for top in ROOTS:
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith(('.c', '.h')):
                    yield os.path.relpath(os.path.join(d, f), root)


def main(root):
    bad, nfiles, nfuncs = [], 0, 0
    for src in sorted(sources(root)):
        with open(os.path.join(root, src), errors='replace') as fp:
            text = fp.read()
        nfiles += 1
        n = text.count('\n')
        if n > MAX_LINES:
            bad.append('%s: %d lines (limit %d)' % (src, n, MAX_LINES))
        for name, line, length in functions(text):
            nfuncs += 1
            if length > MAX_FUNC:
                bad.append('%s:%d: %s() is %d lines (limit %d)'
                           % (src, line, name, length, MAX_FUNC))
    for b in bad:
        print(b)
    if bad:
        return 1
    print('%d files, %d functions: within %d lines per file, %d per function'
          % (nfiles, nfuncs, MAX_LINES, MAX_FUNC))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else '.'))
