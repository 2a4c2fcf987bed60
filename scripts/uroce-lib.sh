# uroce-lib.sh: shell functions shared by the uroce-* subcommands (sourced,
# not executed).  They know the run-directory layout fixed in
# docs/discovery.md: per device NAME,
#   $UROCE_RUN_DIR/NAME.{sock,pid,log,conf}
#   $UROCE_RUN_DIR/sysfs/class/infiniband/NAME/...
#   $UROCE_RUN_DIR/sysfs/class/infiniband_verbs/uverbs_NAME/...
# The `uroce` dispatcher exports UROCE_RUN_DIR, UROCED, UROCE_PROVIDER and
# UROCE_LIBEXECDIR before it runs a subcommand.

PROG=${PROG:-uroce}

# die MESSAGE: one line on stderr, exit 1.
die() {
	echo "$PROG: $*" >&2
	exit 1
}

# need_env: refuse to run outside the dispatcher (the paths come from it).
need_env() {
	[ -n "${UROCE_RUN_DIR:-}" ] && [ -n "${UROCED:-}" ] && [ -n "${UROCE_PROVIDER:-}" ] ||
		die "run this through the 'uroce' command (UROCE_RUN_DIR, UROCED, UROCE_PROVIDER unset)"
	SYSFS_ROOT=$UROCE_RUN_DIR/sysfs
	IBDIR=$SYSFS_ROOT/class/infiniband
	UVDIR=$SYSFS_ROOT/class/infiniband_verbs
}

# valid_name NAME: an IB device name uroce accepts (letters, digits, _ and -,
# starting with a letter, at most 63 bytes as IB_DEVICE_NAME_MAX - 1).
valid_name() {
	case $1 in
	'' | [!A-Za-z]* | *[!A-Za-z0-9_-]*) return 1 ;;
	esac
	[ ${#1} -le 63 ]
}

# find_libexec PROG: path of an executable in UROCE_LIBEXECDIR, or empty.
find_libexec() {
	_fl_found=
	_fl_save=$IFS
	IFS=:
	for _fl_d in $UROCE_LIBEXECDIR; do
		if [ -z "$_fl_found" ] && [ -x "$_fl_d/$1" ] && [ ! -d "$_fl_d/$1" ]; then
			_fl_found=$_fl_d/$1
		fi
	done
	IFS=$_fl_save
	echo "$_fl_found"
}

# dev_pid NAME: the daemon's pid if it runs (its pid file names a live
# process whose command is uroced), else empty.  /proc/PID/comm is readable
# for every user, unlike kill -0 on another user's process.
dev_pid() {
	_dp_pid=
	if [ -r "$UROCE_RUN_DIR/$1.pid" ]; then
		read -r _dp_pid <"$UROCE_RUN_DIR/$1.pid" 2>/dev/null || _dp_pid=
	fi
	case $_dp_pid in
	'' | *[!0-9]*) return 0 ;;
	esac
	_dp_comm=$(cat "/proc/$_dp_pid/comm" 2>/dev/null) || return 0
	# a killed daemon not yet reaped (zombie, state Z) is not running
	_dp_state=$(sed -n 's/^[0-9]* (.*) \([A-Za-z]\) .*/\1/p' "/proc/$_dp_pid/stat" 2>/dev/null)
	[ "$_dp_state" != Z ] || return 0
	case $_dp_comm in
	*uroced*) echo "$_dp_pid" ;;
	esac
}

# dev_known NAME: any trace of the device in the run directory.
dev_known() {
	[ -e "$UROCE_RUN_DIR/$1.conf" ] || [ -e "$UROCE_RUN_DIR/$1.pid" ] ||
		[ -e "$IBDIR/$1" ] || [ -e "$UVDIR/uverbs_$1" ]
}

# list_devs: every device name that has a trace in the run directory, sorted.
list_devs() {
	{
		for _ld_f in "$UROCE_RUN_DIR"/*.conf "$UROCE_RUN_DIR"/*.pid; do
			[ -e "$_ld_f" ] || continue
			_ld_b=${_ld_f##*/}
			echo "${_ld_b%.*}"
		done
		for _ld_f in "$IBDIR"/*; do
			[ -d "$_ld_f" ] || continue
			case ${_ld_f##*/} in .*) continue ;; esac
			echo "${_ld_f##*/}"
		done
	} | sort -u
}

# conf_get NAME KEY: a value from NAME.conf (lines KEY=VALUE), or empty.
conf_get() {
	sed -n "s/^$2=//p" "$UROCE_RUN_DIR/$1.conf" 2>/dev/null | head -n 1
}

# dev_sock NAME: the control socket the sysfs tree publishes (falls back to
# the run-directory default).
dev_sock() {
	if [ -r "$IBDIR/$1/uroce_socket" ]; then
		cat "$IBDIR/$1/uroce_socket"
	else
		echo "$UROCE_RUN_DIR/$1.sock"
	fi
}

# admin NAME ARGS...: uroced --admin on the device's socket; uroced's exit
# status (0 ok, 1 refused, 2 cannot connect), or 124 if the daemon does not
# answer within UROCE_ADMIN_TIMEOUT seconds (default 10; e.g. it is stopped).
admin() {
	_ad_name=$1
	shift
	timeout "${UROCE_ADMIN_TIMEOUT:-10}" "$UROCED" --admin "$(dev_sock "$_ad_name")" "$@"
}

# admin_fail RC NAME WHAT: die saying why `admin NAME ...` (doing WHAT)
# failed with status RC; uroced's own reason, if any, is already on stderr.
admin_fail() {
	case $1 in
	124) die "$2: the daemon did not answer $3 within ${UROCE_ADMIN_TIMEOUT:-10} s (stopped or wedged?)" ;;
	2) die "$2: cannot connect to the daemon at $(dev_sock "$2")" ;;
	*) die "$2: the daemon refused $3" ;;
	esac
}

# need_up NAME: die unless the device's daemon runs.
need_up() {
	valid_name "$1" || die "'$1' is not a valid device name"
	[ -n "$(dev_pid "$1")" ] || die "device $1 is not up (in $UROCE_RUN_DIR; try 'uroce up --dev $1')"
}

# rdma_netlink_possible: true if this kernel has, or can load, ib_core and
# so answers RDMA netlink; libibverbs then ignores SYSFS_PATH unless the
# socket is hidden (uroce run).  Looked up without opening the socket:
# opening it is what auto-loads the module.
rdma_netlink_possible() {
	[ -d /sys/module/ib_core ] && return 0
	for _rn_d in "/lib/modules/$(uname -r)" "/usr/lib/modules/$(uname -r)"; do
		[ -f "$_rn_d/modules.dep" ] && grep -q '/ib_core\.ko' "$_rn_d/modules.dep" && return 0
	done
	return 1
}

# run_dir_owner_ok: 0 unless the run directory exists and belongs to a user
# other than us and root (then its tree, which names the socket programs
# connect to, may have been planted: e.g. a /tmp/uroce-UID made by someone else).
run_dir_owner_ok() {
	[ -d "$UROCE_RUN_DIR" ] || return 0
	_ro_uid=$(stat -c %u "$UROCE_RUN_DIR")
	[ "$_ro_uid" = "$(id -u)" ] || [ "$_ro_uid" = 0 ]
}

# run_dir_safe: 0 unless the run directory exists and users other than its
# owner may write to it (then programs must not trust its tree).
run_dir_safe() {
	[ -d "$UROCE_RUN_DIR" ] || return 0
	_rs_mode=$(stat -c %a "$UROCE_RUN_DIR")
	case ${_rs_mode#"${_rs_mode%??}"} in
	*[2367]*) return 1 ;;
	esac
	return 0
}
