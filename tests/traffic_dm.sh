#!/bin/sh
# traffic_dm: tests/traffic_dm (Check) inside `uroce run`: device memory's
# caps, allocation, copy and registration rules, a peer's WRITE / READ /
# FETCH_ADD / CMP_SWP / SEND into a zero-based DM MR, fork children using
# their parent's context, a killed holder's memory returned, and the same
# requests from a hostile client on the control socket. Then, as user
# nobody, the per-uid quota (64 KiB over two contexts; root has none).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
UROCE_DM_SOCK="$UROCE_RUN_DIR/uroce0.sock" timeout 600 "$UROCE" run -- "$top_builddir/tests/traffic_dm"
rc=$?
expect_eq "traffic_dm exit status" 0 "$rc"
if [ "$(id -u)" = 0 ]; then
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups -- \
		timeout 120 "$UROCE" run -- "$top_builddir/tests/traffic_dm" quota >"$T/quota" 2>&1
	rc=$?
	cat "$T/quota"
	expect_eq "traffic_dm quota as nobody" 0 "$rc"
	expect_eq "quota rows passed" 9 "$(grep -c '^ok: ' "$T/quota")"
else
	echo "note: not root: the quota part needs a second user and did not run"
fi
