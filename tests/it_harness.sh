#!/bin/sh
# it_harness: the harness of tests/lib.sh itself, on plain TCP programs:
# `pair` waits for the server to listen, returns 0 only when both sides
# exit 0, and reports a hang as rc 124 (with a note on empty logs); `tmo`
# scales a bound by UROCE_TIMEOUT_FACTOR; `fail` prints expected vs actual
# and exits 1; `free_tcp_port` gives a port nobody listens on.
. "$top_srcdir/tests/lib.sh"
PY=/usr/bin/python3
port=$(free_tcp_port)
srv="$PY -c 'import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((\"127.0.0.1\", $port)); s.listen(1); c, _ = s.accept(); c.sendall(b\"hello\"); c.close()'"
cli="$PY -c 'import socket; s = socket.create_connection((\"127.0.0.1\", $port)); print(s.recv(5).decode())'"

pair 30 "$port" "$srv" "$cli" >"$T/pair.out"
expect_eq "pair of good programs: status" 0 $?
expect_eq "pair report" "pair: server rc=0 client rc=0" "$(cat "$T/pair.out")"
expect_eq "client output" hello "$(cat "$T/cli.log")"

# A client that fails makes the pair fail.
port=$(free_tcp_port)
srv="$PY -c 'import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((\"127.0.0.1\", $port)); s.listen(1); c, _ = s.accept(); c.close()'"
pair 30 "$port" "$srv" "$PY -c 'import socket; socket.create_connection((\"127.0.0.1\", $port)); raise SystemExit(3)'" >"$T/pair.out"
expect_eq "pair with a failing client: status" 1 $?
expect_eq "pair report" "pair: server rc=0 client rc=3" "$(cat "$T/pair.out")"

# A server that never gets its client hangs: timeout's 124.
port=$(free_tcp_port)
srv="$PY -c 'import socket, time; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((\"127.0.0.1\", $port)); s.listen(1); time.sleep(60)'"
pair 2 "$port" "$srv" "true" >"$T/pair.out"
expect_eq "pair with a hanging server: status" 1 $?
expect_eq "pair report" "pair: server rc=124 client rc=0
pair: stopped after $(tmo 2) s; an empty log does not mean the device was never opened (see the daemon log's client lines)" "$(cat "$T/pair.out")"

# tmo scales a bound by UROCE_TIMEOUT_FACTOR (1 when unset).
expect_eq "tmo 60, factor unset" 60 "$(unset UROCE_TIMEOUT_FACTOR; tmo 60)"
expect_eq "tmo 60, factor 3" 180 "$(UROCE_TIMEOUT_FACTOR=3 tmo 60)"

# fail's report.
(fail "a check" "one" "two") >"$T/fail.out"
expect_eq "fail exit status" 1 $?
expect_eq "fail report" "FAIL: it_harness: a check
  expected: one
  actual:   two" "$(cat "$T/fail.out")"
