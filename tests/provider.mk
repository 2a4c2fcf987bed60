# tests/provider.mk: filled in by the piece it names.
