# tests/netstack.mk: filled in by the piece it names.
