# tests/repo.mk: checks over the repository's own text.
# docs_refs.sh: every document the tree cites is in the tree; no history tokens.
TESTS += tests/docs_refs.sh
EXTRA_DIST += tests/docs_refs.sh tests/README.md
# code_limits.sh: no source file over 800 lines, no function over 120.
TESTS += tests/code_limits.sh
EXTRA_DIST += tests/code_limits.sh tests/code_limits.py
