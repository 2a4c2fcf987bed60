# daemon_lib.sh - shared by the daemon tests: start a private uroced (own
# socket in a fresh temporary directory, UDP port chosen by the kernel with
# --port 0) and stop it on exit. Sourced; needs $top_builddir.

UROCED="$top_builddir/emu/uroced"
D=$(mktemp -d "${TMPDIR:-/tmp}/uroced-test.XXXXXX") || exit 99
# Reachable by the uid-switching rows (nobody must reach the socket).
chmod 755 "$D"
SOCK="$D/uroce0.sock"

fail() {
	echo "FAIL: $*" >&2
	[ -f "$D/log" ] && sed 's/^/  log: /' "$D/log" >&2
	exit 1
}

# start_uroced [extra options...]: start the daemon, wait for its socket.
start_uroced() {
	"$UROCED" --dev uroce0 --addr 127.0.0.1 --port 0 --sock "$SOCK" --log "$D/log" \
		--pidfile "$D/pid" --daemonize "$@" || fail "uroced did not start"
	PID=$(cat "$D/pid") || fail "no pidfile"
}

stop_uroced() {
	if [ -n "${PID:-}" ] && kill -0 "$PID" 2>/dev/null; then
		"$UROCED" --admin "$SOCK" shutdown >/dev/null 2>&1 || kill "$PID" 2>/dev/null
	fi
}

cleanup() {
	stop_uroced
	rm -rf "$D"
}
trap cleanup EXIT

# totals: print the daemon's "totals ..." status line
totals() {
	"$UROCED" --admin "$SOCK" status | grep '^totals '
}
