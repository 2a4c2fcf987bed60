# tests/inspect_lua.mk: the Wireshark ICRC plugin (tools/wireshark/uroce.lua)
# in real tshark: listed, edited and clean captures (inspect_lua.py), and a
# capture corrupted by uroce's fault injection against `uroce inspect`
# (inspect_lua_live.sh).
TESTS += tests/inspect_lua.py
EXTRA_DIST += tests/inspect_lua.py
TESTS += tests/inspect_lua_live.sh
EXTRA_DIST += tests/inspect_lua_live.sh
