#!/bin/sh
# The libFuzzer harness of the daemon's control protocol (tests/fuzz_ctl.c):
# 10 s in `make check`, `make fuzz-ctl FUZZ_SECONDS=3600` longer, from
# tests/fuzz-ctl-corpus (a verbs client's whole life, HELLO to DEALLOC_PD,
# the same life left unfinished, each admin request, bad HELLOs).
exec /bin/sh "${top_srcdir:-.}/tests/fuzz_run.sh" fuzz_ctl fuzz-ctl-corpus 4096 10
