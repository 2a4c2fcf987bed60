# tests/traffic_lib.sh: ibv_rc_pingpong helpers shared by traffic_rc_pingpong*.sh
# (sourced after tests/lib.sh and `up`): khz (hca_core_clock), run, stamps.
"$UROCE" run -- ibv_devinfo -v -d uroce0 >"$T/devinfo" 2>&1 || fail "ibv_devinfo -v"
khz=$(sed -n 's/^\thca_core_clock:\t*\([0-9]*\)kHZ$/\1/p' "$T/devinfo")
[ -n "$khz" ] && [ "$khz" -gt 0 ] || fail "hca_core_clock" "<N>kHZ" "$(grep -i clock "$T/devinfo")"
echo "ok: hca_core_clock ${khz} kHz"

B="$UROCE run -- ibv_rc_pingpong -d uroce0 -i 1 -g 0"

# run NAME SIZE ITERS ARGS: one server/client pair; logs kept as $T/NAME.{srv,cli}.
run() {
	_name=$1 _size=$2 _iters=$3
	shift 3
	_p=$(free_tcp_port)
	pair 120 "$_p" "$B -p $_p $*" "$B -p $_p $* 127.0.0.1"
	_rc=$?
	cp "$T/srv.log" "$T/$_name.srv"
	cp "$T/cli.log" "$T/$_name.cli"
	for _side in srv cli; do
		echo "---- $_name $_side: ibv_rc_pingpong $*"
		cat "$T/$_name.$_side"
	done
	[ $_rc -eq 0 ] || fail "$_name: both sides exit 0"
	for _side in srv cli; do
		_f=$T/$_name.$_side
		grep -Eq "^$((_size * _iters * 2)) bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec\$" "$_f" ||
			fail "$_name $_side: bytes line" "$((_size * _iters * 2)) bytes in S seconds = R Mbit/sec" "$(grep 'bytes in' "$_f")"
		grep -Eq "^$_iters iters in [0-9.]+ seconds = [0-9.]+ usec/iter\$" "$_f" ||
			fail "$_name $_side: iters line" "$_iters iters in S seconds = U usec/iter" "$(grep 'iters in' "$_f")"
		expect_eq "$_name $_side: failure markers" "" \
			"$(grep -E 'Failed status|Couldn|invalid data in page|poll CQ failed|parse WC failed' "$_f")"
	done
	echo "ok: $_name"
}

# stamps NAME: the -t lines of both sides, checked against usec/iter.
stamps() {
	for _side in srv cli; do
		_f=$T/$1.$_side
		_max=$(sed -n 's/^Max receive completion clock cycles = \([0-9]*\)$/\1/p' "$_f")
		_min=$(sed -n 's/^Min receive completion clock cycles = \([0-9]*\)$/\1/p' "$_f")
		_avg=$(sed -n 's/^Average receive completion clock cycles = \([0-9.]*\)$/\1/p' "$_f")
		_us=$(sed -n 's/^[0-9]* iters in [0-9.]* seconds = \([0-9.]*\) usec\/iter$/\1/p' "$_f")
		[ -n "$_max" ] && [ -n "$_min" ] && [ -n "$_avg" ] ||
			fail "$1 $_side: Max/Min/Average receive completion clock cycles lines" "three lines" "$(grep -i 'clock cycles' "$_f")"
		awk -v mx="$_max" -v mn="$_min" -v av="$_avg" 'BEGIN { exit !(mn > 0 && mn <= av && av <= mx) }' ||
			fail "$1 $_side: 0 < Min <= Average <= Max" "ordered" "min=$_min avg=$_avg max=$_max"
		_want=$(awk -v us="$_us" -v k="$khz" 'BEGIN { printf "%.1f", us * k / 1000 }')
		awk -v av="$_avg" -v w="$_want" 'BEGIN { d = av - w; if (d < 0) d = -d; exit !(w > 0 && d <= 0.25 * w) }' ||
			fail "$1 $_side: Average within 25% of usec/iter x hca_core_clock / 1000" "$_want (+-25%)" "$_avg"
		echo "ok: $1 $_side: min=$_min avg=$_avg max=$_max cycles; usec/iter $_us x ${khz} kHz / 1000 = $_want"
	done
}

