#!/bin/sh
# it_two_devices: two devices on one host, uroce0 on 127.0.0.1 and uroce1 on
# 127.0.0.2 (Linux's loopback answers for all of 127.0.0.0/8), same UDP
# port: each has its own GID, and rdma-core's unmodified ibv_rc_pingpong -c
# runs between them (server on uroce0, client on uroce1), 500 iterations of
# 4 KiB, exact byte and iteration counts on both sides.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
uroce up --dev uroce1 --addr 127.0.0.2 --port "$UROCE_PORT" || fail "uroce up uroce1 on 127.0.0.2:$UROCE_PORT"
"$UROCE" run -- ibv_devinfo -v -d uroce1 >"$T/devinfo1" 2>&1
devinfo_ok uroce1 127.0.0.2 "$UROCE_PORT" "$T/devinfo1"

_p=$(free_tcp_port)
pair 120 "$_p" "$UROCE run -- ibv_rc_pingpong -d uroce0 -g 0 -c -n 500 -p $_p" \
	"$UROCE run -- ibv_rc_pingpong -d uroce1 -g 0 -c -n 500 -p $_p 127.0.0.1"
_rc=$?
cat "$T/srv.log" "$T/cli.log"
expect_eq "both sides exit 0" 0 "$_rc"
for _side in srv cli; do
	grep -Eq "^4096000 bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec\$" "$T/$_side.log" ||
		fail "$_side: bytes line" "4096000 bytes in S seconds = R Mbit/sec" "$(grep 'bytes in' "$T/$_side.log")"
	grep -Eq "^500 iters in [0-9.]+ seconds" "$T/$_side.log" || fail "$_side: iters line"
done
grep -q "GID ::ffff:127.0.0.2" "$T/srv.log" || fail "server saw the client's GID ::ffff:127.0.0.2"
echo "ok: uroce0 <-> uroce1"
