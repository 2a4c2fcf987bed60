# emu/transport.mk: filled in by the piece it names.
