# tests/lib.sh: the harness every integration test (tests/it_*.sh) sources.
#
# It gives each test its own world, so that tests run in parallel:
#   - T: a private temporary directory (removed at exit), UROCE_RUN_DIR=$T/run
#   - up [ARGS]: `uroce up` there on a free UDP port (retried while busy);
#     sets UROCE_PORT
#   - at exit: `uroce down --all`, the daemons' logs printed if the test
#     failed, $T removed
#   - urun CMD...: CMD through `$top_builddir/uroce run --` (as TEST_USER)
#   - pair TIMEOUT TCPPORT SERVER CLIENT: a server and a client command
#     (each through sh -c, with timeouts), the usual two-process harness
#   - fail / expect_eq / expect_line: print expected vs actual, exit 1
# Set TEST_USER=nobody before sourcing to run every uroce command (up,
# run, down...) as that user; the build tree must then be readable by it.
# Automake's harness exports top_srcdir and top_builddir (absolute).

set -u
: "${top_builddir:?run through make check (top_builddir unset)}"
: "${top_srcdir:?run through make check (top_srcdir unset)}"
UROCE=$top_builddir/uroce
TEST_NAME=$(basename "$0" .sh)
TEST_USER=${TEST_USER:-}

T=$(mktemp -d "${TMPDIR:-/tmp}/uroce-$TEST_NAME.XXXXXX")
chmod 755 "$T"
UROCE_RUN_DIR=$T/run
export UROCE_RUN_DIR
# Other uroce variables from the caller's shell must not leak in.
unset SYSFS_PATH RDMAV_DRIVERS IBV_DRIVERS UROCE_LIBEXECDIR UROCED UROCE_PROVIDER
# Tests leave the host's /dev as they found it: `uroce up` and `uroce run`
# make no /dev/infiniband nodes (programs get them inside `uroce run`'s
# namespace); tests/it_root.sh makes and removes its own.
UROCE_NO_HOST_DEV=1
export UROCE_NO_HOST_DEV

# as_user CMD...: CMD as TEST_USER (same environment), or as ourselves.
as_user() {
	if [ -n "$TEST_USER" ] && [ "$(id -u)" = 0 ]; then
		setpriv --reuid="$TEST_USER" --regid="$(id -g "$TEST_USER")" --clear-groups -- "$@"
	else
		"$@"
	fi
}
if [ -n "$TEST_USER" ] && [ "$(id -u)" = 0 ]; then
	chown "$TEST_USER" "$T"
fi

# uroce ARGS...: the uroce command, as TEST_USER.
uroce() {
	as_user "$UROCE" "$@"
}

# urun CMD...: CMD through `uroce run --`.
urun() {
	as_user "$UROCE" run -- "$@"
}

# reap PID...: kill PID at the test's exit, whether it passes or fails
# (a background helper such as a CPU hog must not outlive a failed test
# and slow every test after it).
_lib_reap=
reap() {
	_lib_reap="$_lib_reap $*"
}

_lib_exit() {
	_rc=$?
	set +e
	[ -n "$_lib_reap" ] && kill $_lib_reap 2>/dev/null
	if [ "$_rc" -ne 0 ]; then
		for _l in "$UROCE_RUN_DIR"/*.log; do
			[ -f "$_l" ] || continue
			echo "---- $_l (last 40 lines)"
			tail -n 40 "$_l"
		done
	fi
	if [ -d "$UROCE_RUN_DIR" ]; then
		"$UROCE" down --all >/dev/null 2>&1
	fi
	[ -n "${_lib_hp_old:-}" ] && hugepages_restore
	rm -rf "$T"
	exit "$_rc"
}
trap _lib_exit EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# lua_tshark PCAP ARG...: "$TSHARK" -n on PCAP with tools/wireshark/uroce.lua
# (-X lua_script:). Wireshark runs a user's Lua scripts for root only when a
# system init.lua sets run_user_scripts_when_superuser (Debian 12's 4.0 does;
# Debian 13's 4.4 has no init.lua, and silently ignores -X lua_script for
# root: docs/inspect.md): as root, tshark runs as nobody (setpriv), with a
# home of its own holding the plugin, the capture on its stdin.
lua_tshark() {
	_lt_pcap=$1
	shift
	if [ "$(id -u)" -ne 0 ]; then
		"$TSHARK" -n -r "$_lt_pcap" -X "lua_script:$top_srcdir/tools/wireshark/uroce.lua" "$@"
		return
	fi
	_lt_home="$T/tshark-nobody"
	if [ ! -d "$_lt_home" ]; then
		mkdir "$_lt_home" && cp "$top_srcdir/tools/wireshark/uroce.lua" "$_lt_home/" &&
			chown -R 65534:65534 "$_lt_home" && chmod 711 "$T" ||
			fail "lua_tshark: cannot make $_lt_home for nobody"
	fi
	setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$_lt_home" XDG_CONFIG_HOME="$_lt_home" \
		"$TSHARK" -n -r - -X "lua_script:$_lt_home/uroce.lua" "$@" <"$_lt_pcap"
}

# fail WHAT [EXPECTED ACTUAL]: report and exit 1.
fail() {
	echo "FAIL: $TEST_NAME: $1"
	if [ $# -ge 3 ]; then
		echo "  expected: $2"
		echo "  actual:   $3"
	fi
	exit 1
}

# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
	[ "$2" = "$3" ] || fail "$1" "$2" "$3"
	echo "ok: $1 = $3"
}

# expect_line WHAT FILE LINE: FILE must contain LINE exactly (a whole line;
# printf escapes such as \t are expanded).
expect_line() {
	_want=$(printf "$3")
	if ! grep -qxF -- "$_want" "$2"; then
		echo "---- $2:"
		cat "$2"
		fail "$1: line missing from $2" "$(printf '%s' "$_want" | sed -n l)" "(no such line)"
	fi
	echo "ok: $1"
}

# rand16: a random number 0..65535.
rand16() {
	od -An -N2 -tu2 /dev/urandom | tr -d ' '
}

# free_tcp_port: a TCP port no socket uses (listening, connected or in
# TIME_WAIT), below the kernel's ephemeral range (ip_local_port_range,
# 32768.. by default), so no connection of a concurrent test takes it as its
# local port between our check and the server's bind().
free_tcp_port() {
	_lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
	[ "$_lo" -gt 12000 ] 2>/dev/null || _lo=60000
	while :; do
		_p=$((10000 + $(rand16) % (_lo - 10000)))
		if ! ss -H -t -a -n 2>/dev/null | awk '{print $4}' | grep -q ":$_p\$"; then
			echo "$_p"
			return
		fi
	done
}

# up [ARGS...]: `uroce up ARGS --port P` on a free random UDP port P
# (UROCE_PORT); a busy port is retried, any other failure fails the test.
up() {
	_tries=0
	while [ $_tries -lt 10 ]; do
		UROCE_PORT=$((20000 + $(rand16) % 40000))
		if uroce up "$@" --port "$UROCE_PORT" >"$T/up.out" 2>&1; then
			cat "$T/up.out"
			return 0
		fi
		grep -q 'in use\|already used' "$T/up.out" || {
			cat "$T/up.out"
			fail "uroce up $*"
		}
		_tries=$((_tries + 1))
	done
	fail "uroce up: no free UDP port after 10 tries"
}

# dev_status_field LINE FIELD: FIELD of the status line starting with LINE
# in uroce0's `uroce status` (its value, digits); fails the test if absent.
dev_status_field() {
	uroce status --dev uroce0 >"$T/status" 2>&1 || fail "uroce status"
	_v=$(sed -n "s/^$1 .*[ ]$2=\([0-9]*\).*\$/\1/p; s/^$1 $2=\([0-9]*\).*\$/\1/p" "$T/status")
	[ -n "$_v" ] || fail "$1 $2 in uroce status" "$1 ... $2=N" "$(cat "$T/status")"
	echo "$_v"
}

# wait_listen TCPPORT SECONDS: 0 once something listens on TCPPORT.
wait_listen() {
	_n=$(($2 * 10))
	while [ "$_n" -gt 0 ]; do
		ss -H -t -l -n 2>/dev/null | awk '{print $4}' | grep -q ":$1\$" && return 0
		sleep 0.1
		_n=$((_n - 1))
	done
	return 1
}

# tmo SECONDS: the bound for a busy-polling client run (rdma-core's
# pingpongs spin on ibv_poll_cq, so each round trip waits for the scheduler:
# on 2 shared cores at load 14-22 one ibv_rc_pingpong iteration took 24 ms,
# 64 ms when the test runs under nice), times UROCE_TIMEOUT_FACTOR (default
# 1; make check-asan sets 3: its daemon is instrumented and the suite runs
# under nice).
tmo() {
	echo $(($1 * ${UROCE_TIMEOUT_FACTOR:-1}))
}

# pair TIMEOUT TCPPORT SERVER CLIENT: run SERVER (sh -c, in the background),
# wait until it listens on TCPPORT, run CLIENT; both under `timeout` of
# `tmo TIMEOUT` (rc 124 = hang).  Output in $T/srv.log and $T/cli.log;
# returns 0 iff both exit 0, prints both exit codes.
pair() {
	_t=$(tmo "$1")
	timeout "$_t" sh -c "$3" >"$T/srv.log" 2>&1 &
	_sp=$!
	if ! wait_listen "$2" "$_t"; then
		echo "pair: server never listened on TCP port $2"
	fi
	timeout "$_t" sh -c "$4" >"$T/cli.log" 2>&1
	_c=$?
	wait $_sp
	_s=$?
	echo "pair: server rc=$_s client rc=$_c"
	if [ $_s -eq 124 ] || [ $_c -eq 124 ]; then
		# stdout into a file is block-buffered: a killed client leaves
		# an empty log even if it opened the device and ran
		echo "pair: stopped after $_t s; an empty log does not mean the device was never opened (see the daemon log's client lines)"
	fi
	[ $_s -eq 0 ] && [ $_c -eq 0 ]
}

# pingpong NAME PROGRAM DEV SIZE ITERS ARGS...: an rdma-core pingpong
# (ibv_rc/uc/ud_pingpong) as server and client, two processes on DEV (GID
# 0) through `uroce run`, out-of-band over TCP on 127.0.0.1: both exit 0,
# exact byte and iteration counts (SIZE x ITERS x 2, ITERS), no failure
# marker. docs/clients.md §1.
pingpong() {
	_name=$1 _prog=$2 _dev=$3 _size=$4 _iters=$5
	shift 5
	_p=$(free_tcp_port)
	_b="$UROCE run -- $_prog -d $_dev -i 1 -g 0 -p $_p"
	pair 120 "$_p" "$_b $*" "$_b $* 127.0.0.1"
	_rc=$?
	for _side in srv cli; do
		echo "---- $_name $_side: $_prog $*"
		cat "$T/$_side.log"
	done
	[ $_rc -eq 0 ] || fail "$_name: both sides exit 0"
	for _side in srv cli; do
		_f=$T/$_side.log
		grep -Eq "^$((_size * _iters * 2)) bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec\$" "$_f" ||
			fail "$_name $_side: bytes line" "$((_size * _iters * 2)) bytes in S seconds = R Mbit/sec" "$(grep 'bytes in' "$_f")"
		grep -Eq "^$_iters iters in [0-9.]+ seconds = [0-9.]+ usec/iter\$" "$_f" ||
			fail "$_name $_side: iters line" "$_iters iters in S seconds = U usec/iter" "$(grep 'iters in' "$_f")"
		expect_eq "$_name $_side: failure markers" "" \
			"$(grep -E 'Failed status|Couldn|invalid data|poll CQ failed|parse WC failed' "$_f")"
	done
	echo "ok: $_name"
}

# perftest_two PROGRAM ARGS...: PROGRAM's server on uroce1 and its client on
# uroce0 (which connects to 127.0.0.2, uroce1's address), ARGS passed to
# both, at most 180 s: both exit 0 with no failure marker; the logs in
# $T/srv.log and $T/cli.log.
perftest_two() {
	_prog=$1
	shift
	_p=$(free_tcp_port)
	pair 180 "$_p" "$UROCE run -- $_prog -d uroce1 -i 1 -x 0 -F -p $_p $*" \
		"$UROCE run -- $_prog -d uroce0 -i 1 -x 0 -F -p $_p $* 127.0.0.2"
	_rc=$?
	cat "$T/srv.log" "$T/cli.log"
	[ $_rc -eq 0 ] || fail "$_prog $*: both sides exit 0"
	expect_eq "$_prog $*: failure markers" "" \
		"$(grep -E 'Completion with error|Couldn|Failed to|Unable to' "$T/srv.log" "$T/cli.log")"
}

# perftest PROGRAM KIND BYTES ITERS ARGS...: a perftest tool (KIND bw or
# lat) as server and client, two processes on uroce0 (GID 0) through `uroce
# run`, exchange over TCP on 127.0.0.1, ARGS passed to both: both exit 0, no
# failure marker, one result row with exactly BYTES and ITERS, BW average > 0
# or 0 < t_min <= t_avg (finite). docs/clients.md §2.
perftest() {
	_prog=$1 _kind=$2 _bytes=$3 _iters=$4
	shift 4
	_p=$(free_tcp_port)
	_b="$UROCE run -- $_prog -d uroce0 -i 1 -x 0 -F -p $_p $*"
	pair 120 "$_p" "$_b" "$_b 127.0.0.1"
	_rc=$?
	for _side in srv cli; do
		echo "---- $_prog $_side: $*"
		cat "$T/$_side.log"
	done
	[ $_rc -eq 0 ] || fail "$_prog $*: both sides exit 0"
	for _side in srv cli; do
		expect_eq "$_prog $_side: failure markers" "" \
			"$(grep -E 'Completion with error|Poll send CQ error|poll CQ failed|Couldn|Failed to|Unable to' "$T/$_side.log")"
	done
	if [ "$_kind" = bw ]; then
		# #bytes #iterations BW-peak BW-average MsgRate
		_row=$(grep -E '^[[:space:]]*[0-9]+([[:space:]]+[0-9.]+){4}[[:space:]]*$' "$T/cli.log")
		[ "$(printf '%s\n' "$_row" | grep -c .)" = 1 ] || fail "$_prog: one BW result row" "1 row" "$_row"
		expect_eq "$_prog: #bytes #iterations" "$_bytes $_iters" "$(echo "$_row" | awk '{print $1, $2}')"
		echo "$_row" | awk '{ exit !($4 > 0) }' || fail "$_prog: BW average > 0" "> 0" "$_row"
		echo "ok: $_prog: BW average $(echo "$_row" | awk '{print $4}') MB/sec"
	else
		# #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
		# (perftest prints t_stdev as -nan when its variance sum cancels
		# below zero, seen with one slow outlier; the columns checked are
		# t_min and t_avg)
		_row=$(grep -E '^[[:space:]]*[0-9]+([[:space:]]+[0-9.]+){5}[[:space:]]+(-?nan|[0-9.]+)([[:space:]]+[0-9.]+){2}[[:space:]]*$' "$T/cli.log")
		[ "$(printf '%s\n' "$_row" | grep -c .)" = 1 ] || fail "$_prog: one latency row" "1 row" "$_row"
		expect_eq "$_prog: #bytes #iterations" "$_bytes $_iters" "$(echo "$_row" | awk '{print $1, $2}')"
		echo "$_row" | awk '{ exit !($6 > 0 && $6 < 1e9 && $3 > 0 && $3 <= $6) }' ||
			fail "$_prog: 0 < t_min <= t_avg, finite" "t_avg in (0, 1e9) usec" "$_row"
		echo "ok: $_prog: t_avg $(echo "$_row" | awk '{print $6}') usec"
	fi
}

# devinfo_ok DEV ADDR PORT FILE: FILE (ibv_devinfo -v -d DEV output) shows
# the device as `uroce up --addr ADDR --port PORT` made it: port 1 active,
# Ethernet, GID[0] the v4-mapped ADDR as RoCE v2, the node GUID uroce-gid
# derives, a non-zero completion timestamp mask and HCA clock.
devinfo_ok() {
	_gid=$(as_user "$UROCE" gid "$2" "$3" | sed -n 's/^node_guid //p')
	expect_line "hca_id" "$4" "hca_id:\t$1"
	expect_line "node_guid" "$4" "\tnode_guid:\t\t\t$_gid"
	expect_line "port 1" "$4" "\t\tport:\t1"
	expect_line "port state" "$4" "\t\t\tstate:\t\t\tPORT_ACTIVE (4)"
	expect_line "link layer" "$4" "\t\t\tlink_layer:\t\tEthernet"
	expect_line "GID[0]" "$4" "\t\t\tGID[  0]:\t\t::ffff:$2, RoCE v2"
	_mask=$(sed -n 's/^\tcompletion timestamp_mask:\t*\(0x[0-9a-f]*\)$/\1/p' "$4")
	[ -n "$_mask" ] || fail "completion timestamp_mask line" "0x<16 hex digits>" "$(grep -i timestamp "$4")"
	[ "$_mask" != 0x0000000000000000 ] || fail "completion timestamp_mask non-zero" "non-zero" "$_mask"
	echo "ok: completion timestamp_mask $_mask"
	_clk=$(sed -n 's/^\thca_core_clock:\t*\([0-9]*\)kHZ$/\1/p' "$4")
	[ -n "$_clk" ] && [ "$_clk" -gt 0 ] || fail "hca_core_clock" "<N>kHZ, N > 0" "$(grep -i clock "$4")"
	echo "ok: hca_core_clock ${_clk}kHZ"
}

# pyverbs_major: the major version of rdma-core whose pyverbs tests are
# installed (Debian's python3-pyverbs, e.g. 44 on Debian 12, 56 on Debian 13);
# UROCE_PYVERBS_MAJOR overrides it.
pyverbs_major() {
	if [ -n "${UROCE_PYVERBS_MAJOR:-}" ]; then
		echo "$UROCE_PYVERBS_MAJOR"
		return
	fi
	dpkg-query -W -f='${Version}' python3-pyverbs 2>/dev/null | sed 's/^[0-9]*://; s/[^0-9].*//'
}

# pyverbs_run TIMEOUT TEST...: rdma-core's python tests (Debian's
# python3-pyverbs ships them, gzipped; docs/clients.md §3) on uroce0 through
# `uroce run`, by tests/pyverbs_results.py, which records each test's
# outcome by unittest id. The outcomes must be exactly those of
# tests/pyverbs/MAJOR/$TEST_NAME.tsv for the installed rdma-core MAJOR
# (pyverbs_major): one line per test, "ID<TAB>ok" or "ID<TAB>skip<TAB>REASON";
# the dma-buf reasons, which depend on the host's GPU node
# (/dev/dri/renderD*: absent, not accessible, or without dma-buf), all read
# "dmabuf: no usable /dev/dri/renderD node". Also: run_tests.py exits 0,
# "Ran N tests" with N the file's lines, no FAIL/ERROR, unittest's OK line.
# PYVERBS_HOST_SKIPS (lines "ID<TAB>REASON"): tests the file says pass but
# this host cannot run (huge pages), expected to skip with REASON instead.
# UROCE_PYVERBS_RECORD=1 writes the file from this run (the host's skips of
# PYVERBS_HOST_SKIPS written as ok) and then checks as usual: a test that
# fails or errors still fails the check. Output in $T/py.log, $T/py.results.
pyverbs_run() {
	_to=$1
	shift
	_src=/usr/share/doc/rdma-core/tests
	[ -f "$_src/run_tests.py" ] || fail "pyverbs tests" "$_src/run_tests.py (Debian package python3-pyverbs)" "missing"
	_major=$(pyverbs_major)
	[ -n "$_major" ] || fail "rdma-core version of python3-pyverbs" "a number (dpkg-query, or set UROCE_PYVERBS_MAJOR)" "none"
	_want=$top_srcdir/tests/pyverbs/$_major/$TEST_NAME.tsv
	rm -rf "$T/rdma"
	mkdir "$T/rdma" && cp -r "$_src" "$T/rdma/" && gunzip "$T/rdma/tests/"*.gz ||
		fail "copying and unpacking $_src"
	(cd "$T/rdma" && timeout "$_to" "$UROCE" run -- /usr/bin/python3 "$top_srcdir/tests/pyverbs_results.py" \
		"$T/py.raw" tests/run_tests.py --dev uroce0 --port 1 --gid 0 -v "$@") >"$T/py.log" 2>&1
	_rc=$?
	cat "$T/py.log"
	echo "==== summary (rdma-core $_major)"
	grep -E '^Ran [0-9]+ tests' "$T/py.log"
	tail -n 1 "$T/py.log"
	[ -f "$T/py.raw" ] || fail "pyverbs results" "$T/py.raw written by tests/pyverbs_results.py" "missing"
	sed -E 's,	(Device /dev/dri/renderD[0-9]+ is not present|Lack of permission to access /dev/dri/renderD[0-9]+|Allocating dmabuf is not supported by /dev/dri/renderD[0-9]+)$,	dmabuf: no usable /dev/dri/renderD node,' \
		"$T/py.raw" | LC_ALL=C sort >"$T/py.results"
	printf '%s\n' "${PYVERBS_HOST_SKIPS:-}" | sed '/^$/d' >"$T/py.hostskips"
	if [ "${UROCE_PYVERBS_RECORD:-0}" = 1 ]; then
		mkdir -p "$(dirname "$_want")"
		awk -F '\t' 'FILENAME == ARGV[1] { h[$1 "\tskip\t" $2] = $1 "\tok"; next }
			{ print ($0 in h) ? h[$0] : $0 }' "$T/py.hostskips" "$T/py.results" >"$_want"
		echo "recorded: $_want ($(wc -l <"$_want") tests)"
	fi
	[ -f "$_want" ] || fail "pyverbs expectations for rdma-core $_major" \
		"$_want (record it: UROCE_PYVERBS_RECORD=1 make check TESTS=tests/$TEST_NAME.sh, then check every line)" "missing"
	awk -F '\t' 'FILENAME == ARGV[1] { h[$1] = $2; next }
		($1 in h) && $2 == "ok" { print $1 "\tskip\t" h[$1]; next } { print }' \
		"$T/py.hostskips" "$_want" | LC_ALL=C sort >"$T/py.want"
	_diff=$(diff "$T/py.want" "$T/py.results")
	expect_eq "each test's outcome, as in tests/pyverbs/$_major/$TEST_NAME.tsv (diff: < expected, > actual)" "" "$_diff"
	echo "ok: $(grep -c '	ok$' "$T/py.results") passed, $(grep -c '	skip	' "$T/py.results") skipped, each one by id"
	expect_eq "run_tests.py exit status" 0 "$_rc"
	expect_eq "tests run" "Ran $(wc -l <"$T/py.want") tests" "$(sed -n 's/^\(Ran [0-9]* tests\) in .*/\1/p' "$T/py.log")"
	expect_eq "FAIL/ERROR lines" "" "$(grep -E '^(FAIL|ERROR):' "$T/py.log")"
	case $(tail -n 1 "$T/py.log") in
	OK | "OK (skipped="*")") echo "ok: $(tail -n 1 "$T/py.log")" ;;
	*) fail "unittest result line" "OK [(skipped=N)]" "$(tail -n 1 "$T/py.log")" ;;
	esac
}

# ucx_setup: the options this host's UCX needs on uroce0 (docs/clients.md §4),
# found by asking the installed UCX, not by its version:
#   - UCX_FENCE_MODE=weak (exported) where `ucx_info -c` lists UCX_FENCE_MODE:
#     UCX 1.16 and later choose the "strong" fence, a flush(remote) that needs
#     a flush key only mlx5's DEVX memory domain creates; on rc_verbs it fails
#     with "Unsupported operation";
#   - UCX_PERFTEST_ARGS="-P 0" where `ucx_perftest -h` lists -P (UCX built
#     with MPI: with stdin not a terminal, ucx_perftest takes MPI mode and,
#     outside mpirun, runs as a job of one process), else empty.
ucx_setup() {
	if ucx_info -c 2>/dev/null | grep -q '^UCX_FENCE_MODE='; then
		UCX_FENCE_MODE=weak
		export UCX_FENCE_MODE
		echo "ucx: UCX_FENCE_MODE=weak (ucx_info -c lists UCX_FENCE_MODE)"
	fi
	UCX_PERFTEST_ARGS=
	if ucx_perftest -h </dev/null 2>&1 | grep -q -- '-P <0|1>'; then
		UCX_PERFTEST_ARGS="-P 0"
		echo "ucx: ucx_perftest -P 0 (its help lists -P: built with MPI)"
	fi
}

# hugepages_want N: make at least N huge pages of 2 MiB available for this
# test (the pool pyverbs' requires_huge_pages reads,
# /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages). As root, a pool
# smaller than N is raised to N and put back to its old size when the test
# exits (_lib_exit); not as root, or without that pool, nothing changes. Says
# what it did either way; the tests then pass or skip by the pool's size.
hugepages_want() {
	_hp=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
	if [ ! -f "$_hp" ]; then
		echo "huge pages: this kernel has no 2 MiB pool ($_hp); the huge-page tests skip"
		return 0
	fi
	_hp_now=$(cat "$_hp")
	if [ "$_hp_now" -ge "$1" ]; then
		echo "huge pages: $_hp_now of 2 MiB in the pool, $1 wanted: left as it is"
		return 0
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "huge pages: $_hp_now of 2 MiB in the pool, $1 wanted; not root, so not raised: the huge-page tests skip"
		return 0
	fi
	_lib_hp_old=$_hp_now
	echo "$1" >"$_hp" 2>/dev/null
	echo "huge pages: pool of 2 MiB pages raised from $_hp_now to $(cat "$_hp") ($1 wanted); put back to $_hp_now at exit"
}

hugepages_restore() {
	echo "$_lib_hp_old" >/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages 2>/dev/null
	echo "huge pages: pool of 2 MiB pages put back to $(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages) (was $_lib_hp_old)"
	_lib_hp_old=
}
