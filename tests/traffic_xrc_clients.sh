#!/bin/sh
# traffic_xrc_clients: rdma-core's ibv_xsrq_pingpong (XRC: 8 XRC send QPs
# and 8 XRC receive QPs, one XRC SRQ per client, a domain each side opened
# from a file) between two processes on uroce0 through `uroce run`: both
# sides exit 0 and print "success" (every message came back exact),
# no failure marker.
# Source: docs/xrc.md.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0

_p=$(free_tcp_port)
_b="$UROCE run -- ibv_xsrq_pingpong -d uroce0 -i 1 -g 0 -p $_p"
pair 120 "$_p" "$_b -m 1024 -n 500" "$_b -m 1024 -n 500 127.0.0.1"
_rc=$?
for _side in srv cli; do
	echo "---- xsrq $_side"
	cat "$T/$_side.log"
done
[ $_rc -eq 0 ] || fail "ibv_xsrq_pingpong: both sides exit 0"
for _side in srv cli; do
	expect_eq "xsrq $_side: result line" "success" "$(tail -n 1 "$T/$_side.log")"
	expect_eq "xsrq $_side: failure markers" "" \
		"$(grep -Ei 'fail|couldn|error' "$T/$_side.log")"
done
echo "ok: xsrq"
