# scripts/commands.mk: filled in by the piece it names.
