#!/bin/sh
# The libFuzzer harness of the netstack parsers (tests/fuzz_parse.c): 5 s in
# `make check`, `make fuzz FUZZ_SECONDS=600` longer, from tests/fuzz-corpus.
exec /bin/sh "${top_srcdir:-.}/tests/fuzz_run.sh" fuzz_parse fuzz-corpus 8192 5
