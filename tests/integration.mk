# tests/integration.mk: filled in by the piece it names.
