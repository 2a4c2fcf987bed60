# tests/inspect_graph.mk: `uroce inspect --graph/--timeline` (SVG read back
# by an XML parser and rendered by rsvg-convert) and the Wireshark ICRC plugin.
TESTS += tests/inspect_graph.py
EXTRA_DIST += tests/inspect_graph.py
