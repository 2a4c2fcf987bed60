#!/bin/sh
# it_cm_daemon: the connection manager of two daemons (uroce0 on 127.0.0.1,
# uroce1 on 127.0.0.2 with MTU 1024, same UDP port, --cm-timeout-ms 300),
# driven over their control sockets as the librdmacm provider drives them
# (tests/cm_daemon.py: CM_HELLO, UCMA requests, events): bind rules, listen /
# connect / accept / RTU / ESTABLISHED / disconnect / timewait with exact
# events, statuses, private data and QP attributes; REJECT (28), no listener
# (8), no answer (UNREACHABLE -110 after 15 resends), forged and malformed
# MADs, REJs that must name both comm IDs and a timeout REJ of a held REQ,
# a stream of MRAs (one extra wait only),
# a REQ flood past the backlog, SIDR accept and reject, options, a
# closed connection; as user nobody, the per-uid quota of CM ids
# (--max-cm-ids-per-user 5: the sixth is ENOMEM) and that one user's unanswered
# connect requests leave room for another's; on an IPv6 device (::1),
# a connection with both ends on it. Then tshark decodes uroce0's capture of those MADs as
# InfiniBand CM with the values the test put in (tests/cm_tshark.py).
. "$top_srcdir/tests/lib.sh"
UROCED="$top_builddir/emu/uroced"
export UROCED
up --dev uroce0 --cm-timeout-ms 300 --max-cm-ids-per-user 5 --pcap "$T/cm0.pcap"
uroce up --dev uroce1 --addr 127.0.0.2 --port "$UROCE_PORT" --mtu 1024 --cm-timeout-ms 300 ||
	fail "uroce up uroce1 on 127.0.0.2:$UROCE_PORT"
timeout "$(tmo 240)" /usr/bin/python3 -u "$top_srcdir/tests/cm_daemon.py" \
	"$UROCE_RUN_DIR/uroce0.sock" "$UROCE_RUN_DIR/uroce1.sock" "$UROCE_PORT" >"$T/out" 2>&1
rc=$?
cat "$T/out"
expect_eq "cm_daemon.py exit status" 0 "$rc"
kill -0 "$(cat "$UROCE_RUN_DIR/uroce0.pid")" || fail "uroce0 died"
# The per-uid quota of CM ids (root, the test's own uid, has none): as nobody.
if [ "$(id -u)" = 0 ]; then
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups -- \
		/usr/bin/python3 -u "$top_srcdir/tests/cm_daemon.py" quota "$UROCE_RUN_DIR/uroce0.sock" 5 >"$T/quota" 2>&1
	rc=$?
	cat "$T/quota"
	expect_eq "CM id quota as nobody" 0 "$rc"
else
	echo "note: not root: the CM id quota part needs a second user and did not run"
fi
kill -0 "$(cat "$UROCE_RUN_DIR/uroce1.pid")" || fail "uroce1 died"
"$UROCED" --admin "$UROCE_RUN_DIR/uroce0.sock" capture stop >/dev/null || fail "capture stop"
# IPv6: both ends on one device at ::1
uroce up --dev uroce2 --addr ::1 --port "$UROCE_PORT" --cm-timeout-ms 300 || fail "uroce up uroce2 on [::1]:$UROCE_PORT"
timeout "$(tmo 60)" /usr/bin/python3 -u "$top_srcdir/tests/cm_daemon.py" v6 "$UROCE_RUN_DIR/uroce2.sock" >"$T/v6" 2>&1
rc=$?
cat "$T/v6"
expect_eq "cm_daemon.py v6 exit status" 0 "$rc"
params=$(sed -n 's/^params //p' "$T/out")
[ -n "$params" ] || fail "cm_daemon.py printed no params line"
# shellcheck disable=SC2086
/usr/bin/python3 "$top_srcdir/tests/cm_tshark.py" "$T/cm0.pcap" "$UROCE_PORT" $params ||
	fail "tshark decode of the CM MADs"
# One user's connect requests waiting for an answer are bounded by its own
# quota of CM ids, not by the device's room (1024) that other users'
# listeners need too: as root (the script forks user nobody, who floods its
# own listener from 127.0.0.3 and never answers), on a device with the
# default quota.
if [ "$(id -u)" = 0 ]; then
	up --dev uroce3 --cm-timeout-ms 300
	timeout "$(tmo 120)" /usr/bin/python3 -u "$top_srcdir/tests/cm_daemon.py" pending \
		"$UROCE_RUN_DIR/uroce3.sock" "$UROCE_PORT" >"$T/pending" 2>&1
	rc=$?
	cat "$T/pending"
	expect_eq "cm_daemon.py pending exit status" 0 "$rc"
	kill -0 "$(cat "$UROCE_RUN_DIR/uroce3.pid")" || fail "uroce3 died"
else
	echo "note: not root: the pending-requests part needs a second user and did not run"
fi
