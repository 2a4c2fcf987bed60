# tests/gso.mk: UDP GSO/GRO between two devices (docs/gso.md).
TESTS += tests/it_gso.sh
EXTRA_DIST += tests/it_gso.sh tests/gso_wire.py
