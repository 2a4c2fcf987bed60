# tests/integration.mk: filled in by the piece it names.

# Integration tests (issue 3): real libibverbs clients, pyverbs and the
# uroce command, each test in its own run directory on its own UDP port
# (tests/lib.sh).  They run through the automake parallel harness.
IT_TESTS = tests/it_launch.sh
TESTS += $(IT_TESTS)
EXTRA_DIST += $(IT_TESTS)
dist_check_DATA += tests/lib.sh
