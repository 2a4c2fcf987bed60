#!/bin/sh
# fuzz_disabled: in a tree configured with --disable-fuzz (an install-only
# build, e.g. the container image's build stage) the libFuzzer harnesses
# fuzz_parse, fuzz_ctl and inspect_fuzz were not built, so `make check` has
# not tested what they test: fail, saying so, rather than pass without them.
echo "FAIL: fuzz_disabled: configured with --disable-fuzz; the fuzz harnesses (fuzz_parse, fuzz_ctl, inspect_fuzz) did not run. Reconfigure without --disable-fuzz (needs clang and libclang-rt-N-dev: scripts/install-deps) to test."
exit 1
