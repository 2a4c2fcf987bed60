# tests/repo.mk: checks over the repository's own text.
# docs_refs.sh: every document the tree cites is in the tree; no history tokens.
TESTS += tests/docs_refs.sh
EXTRA_DIST += tests/docs_refs.sh tests/README.md
