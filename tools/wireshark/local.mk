# tools/wireshark/local.mk: the Wireshark/tshark Lua plugin that checks the
# ICRC (docs/inspect.md "Wireshark plugin").  Installed into
# --with-wireshark-luadir (default LIBDIR/wireshark/plugins: with
# --prefix=/usr --libdir=/usr/lib/x86_64-linux-gnu that is Debian's global
# Lua plugin directory, `tshark -G folders` "Global Lua Plugins").
dist_wiresharklua_DATA = tools/wireshark/uroce.lua
