# tests/inspect_graph.mk: `uroce inspect --graph/--timeline` (SVG read back
# by an XML parser and rendered by rsvg-convert) and the Wireshark ICRC plugin.
TESTS += tests/inspect_graph.py
EXTRA_DIST += tests/inspect_graph.py
# `uroce inspect --psn-graph/--latency-svg`: columns, resends by cause and bins
# exact against --flows, the SVG read back and rendered, 100,000 packets
TESTS += tests/inspect_psn_graph.py
EXTRA_DIST += tests/inspect_psn_graph.py
# the same against --flows on uroce's own capture of a lossy perftest run
TESTS += tests/inspect_psn_graph_live.sh
EXTRA_DIST += tests/inspect_psn_graph_live.sh
