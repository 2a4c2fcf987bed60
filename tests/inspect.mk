# tests/inspect.mk: filled in by the piece it names.
