#!/bin/sh
# it_install: a fresh install, as docs/install.md describes it.
#  1. `make install DESTDIR=STAGE sysconfdir=/etc` installs exactly the
#     expected files (provider in libibverbs' provider directory layout,
#     uroce.driver, the profile.d snippet, unit, tmpfiles rule, man pages,
#     completion); `uroce --version` and `uroced --version` say the version;
#     the installed bash completion completes subcommands and arguments.
#  2. `man -l` renders both pages without a warning; uroce(1) has a
#     section for every installed subcommand.
#  3. As an unprivileged user (nobody when run as root), in a user+mount
#     namespace where STAGE is bind-mounted over PREFIX, /etc/profile.d and
#     /etc/libibverbs.d, the real systemd-tmpfiles applies the installed rule
#     (to a private root mounted at /run and /dev/infiniband), the unit's ExecStart
#     brings uroce0 up, and login shells (sh -l, environment emptied)
#     run ibv_devinfo and a 1000-iteration ibv_rc_pingpong without `uroce run`
#     and without RDMAV_DRIVERS; a non-login shell does not see the device.
#  4. `make uninstall DESTDIR=STAGE sysconfdir=/etc` leaves no file and no
#     directory of uroce's own (libexec/uroce).
# Exit 77 (SKIP) without unshare, systemd-tmpfiles or man, when user
# namespaces are not allowed, or when PREFIX does not exist to mount over.

if [ "${1:-}" = inner ]; then
	# In the namespace, as uid 0 of it. STAGE PREFIX PORT TCP set by the caller.
	set -u
	no() { echo "FAIL: it_install (namespace): $*"; exit 1; }
	ok() { echo "ok: $*"; }
	mount --bind "$STAGE$PREFIX" "$PREFIX" || no "bind $PREFIX"
	for d in profile.d libibverbs.d; do
		mkdir "$NS/$d"
		for f in /etc/$d/*; do [ -e "$f" ] && cp "$f" "$NS/$d/"; done
		cp "$STAGE/etc/$d/"* "$NS/$d/"
		mkdir -p "/etc/$d" 2>/dev/null
		mount --bind "$NS/$d" "/etc/$d" || no "bind /etc/$d"
	done
	# The real systemd-tmpfiles applies the installed rule to a private root
	# (in / it refuses the namespace's ownership changes between / and /run),
	# whose /run and /dev/infiniband are then mounted in place.
	trap '"$PREFIX/bin/uroce" down --all >/dev/null 2>&1' EXIT
	mkdir "$NS/root"
	systemd-tmpfiles --root="$NS/root" --create "$PREFIX/lib/tmpfiles.d/uroce.conf" ||
		no "systemd-tmpfiles --create"
	mount --bind "$NS/root/run" /run || no "bind /run"
	if [ ! -d /dev/infiniband ]; then
		# no /dev/infiniband to mount over: a private /dev with the basics
		mkdir "$NS/hostdev" && mount --rbind /dev "$NS/hostdev" && mount -t tmpfs tmpfs /dev || no "private /dev"
		for n in null zero full random urandom tty; do
			touch "/dev/$n" && mount --bind "$NS/hostdev/$n" "/dev/$n"
		done
		ln -s /proc/self/fd /dev/fd && mkdir /dev/shm /dev/infiniband
	fi
	mount --bind "$NS/root/dev/infiniband" /dev/infiniband || no "bind /dev/infiniband"
	[ "$(readlink /dev/infiniband/uverbs_uroce0)" = /dev/null ] || no "tmpfiles: /dev/infiniband/uverbs_uroce0"
	[ "$(stat -c %a /run/uroce)" = 755 ] || no "tmpfiles: /run/uroce"
	ok "the tmpfiles rule made /run/uroce and /dev/infiniband/uverbs_uroce0 -> /dev/null"

	# The unit's ExecStart, with its Environment= and UROCE_UP_ARGS as
	# /etc/default/uroce would give them.
	unit=$PREFIX/lib/systemd/system/uroce.service
	envline=$(sed -n 's/^Environment=//p' "$unit")
	start=$(sed -n 's/^ExecStart=//p' "$unit")
	stop=$(sed -n 's/^ExecStop=//p' "$unit")
	UROCE_UP_ARGS="--port $PORT"
	unset UROCE_RUN_DIR UROCE_NO_HOST_DEV
	# shellcheck disable=SC2086 # the unit's words
	eval "env $envline UROCE_UP_ARGS='$UROCE_UP_ARGS' $start" >"$NS/up.log" 2>&1 ||
		{ cat "$NS/up.log"; no "ExecStart: $start"; }
	pidfile=$(sed -n 's/^PIDFile=//p' "$unit")
	[ -s "$pidfile" ] || no "no PIDFile $pidfile after ExecStart"
	ok "ExecStart brought uroce0 up (PIDFile $pidfile)"
	"$PREFIX/bin/uroce" status >"$NS/status.log" 2>&1 || { cat "$NS/status.log"; no "uroce status"; }
	grep -q '^== uroce0: up, ' "$NS/status.log" || no "installed uroce status (root's run dir /run/uroce)"
	ok "root's uroce status sees the system-wide device"

	login() { env -i HOME=/ TERM=dumb PATH=/usr/bin:/bin sh -l -c "$1"; }
	login 'echo "SYSFS_PATH=${SYSFS_PATH:-} RDMAV_DRIVERS=${RDMAV_DRIVERS:-}"' >"$NS/env.log" 2>&1
	grep -qx "SYSFS_PATH=/run/uroce/sysfs RDMAV_DRIVERS=" "$NS/env.log" ||
		{ cat "$NS/env.log"; no "login shell environment"; }
	ok "a login shell has SYSFS_PATH=/run/uroce/sysfs and no RDMAV_DRIVERS"
	login 'ibv_devinfo -d uroce0' >"$NS/devinfo.log" 2>&1 || { cat "$NS/devinfo.log"; no "ibv_devinfo in a login shell"; }
	grep -q 'hca_id:	uroce0' "$NS/devinfo.log" && grep -q 'state:			PORT_ACTIVE (4)' "$NS/devinfo.log" ||
		{ cat "$NS/devinfo.log"; no "ibv_devinfo output"; }
	ok "ibv_devinfo in a login shell: uroce0, PORT_ACTIVE"
	if env -i HOME=/ PATH=/usr/bin:/bin sh -c 'ibv_devinfo -d uroce0' >"$NS/nologin.log" 2>&1; then
		cat "$NS/nologin.log"; no "a non-login shell saw uroce0"
	fi
	ok "a non-login shell does not see uroce0 ($(head -n 1 "$NS/nologin.log"))"
	pp="ibv_rc_pingpong -d uroce0 -g 0 -p $TCP -n 1000 -s 4096"
	timeout "$((60 * ${UROCE_TIMEOUT_FACTOR:-1}))" env -i HOME=/ TERM=dumb PATH=/usr/bin:/bin sh -l -c "$pp" >"$NS/server.log" 2>&1 &
	spid=$!
	i=0
	while [ $i -lt 100 ] && ! ss -H -t -l -n 2>/dev/null | awk '{print $4}' | grep -q ":$TCP\$"; do
		sleep 0.1; i=$((i + 1))
	done
	timeout "$((60 * ${UROCE_TIMEOUT_FACTOR:-1}))" env -i HOME=/ TERM=dumb PATH=/usr/bin:/bin sh -l -c "$pp 127.0.0.1" >"$NS/client.log" 2>&1
	crc=$?
	wait $spid
	src=$?
	[ $crc = 0 ] && [ $src = 0 ] || { cat "$NS/server.log" "$NS/client.log"; no "ibv_rc_pingpong: server rc $src, client rc $crc"; }
	grep -q '^8192000 bytes in ' "$NS/client.log" && grep -q '^1000 iters in ' "$NS/client.log" ||
		{ cat "$NS/client.log"; no "ibv_rc_pingpong output"; }
	ok "ibv_rc_pingpong, 1000 x 4096 bytes, between two login shells"
	eval "env $envline $stop" >/dev/null 2>&1 || no "ExecStop: $stop"
	[ ! -e /run/uroce/sysfs/class/infiniband_verbs/uverbs_uroce0 ] || no "ExecStop left uroce0 published"
	ok "ExecStop took uroce0 down"
	trap - EXIT
	exit 0
fi

. "$top_srcdir/tests/lib.sh"
for p in unshare systemd-tmpfiles man ibv_rc_pingpong; do
	command -v $p >/dev/null 2>&1 || { echo "SKIP: $p not installed"; exit 77; }
done
mk() { make -s -C "$top_builddir" "$@" DESTDIR="$STAGE" sysconfdir=/etc; }
var() { sed -n "s/^$1 = //p" "$top_builddir/Makefile" | head -n 1; }
STAGE=$T/stage
PREFIX=$(var prefix)
VERSION=$(var PACKAGE_VERSION)
PABI=$(var UROCE_PABI)
mk install >"$T/install.log" 2>&1 || { cat "$T/install.log"; fail "make install"; }
echo "ok: make install DESTDIR=$STAGE sysconfdir=/etc"

# Where each file goes (configure's defaults, sysconfdir=/etc).
cat >"$T/expected" <<EOT
/etc/libibverbs.d/uroce.driver
/etc/profile.d/uroce.sh
$PREFIX/bin/uroce
$PREFIX/include/infiniband/urocedv.h
$PREFIX/lib/libibverbs/liburoce-rdmav$PABI.so
$PREFIX/lib/systemd/system/uroce.service
$PREFIX/lib/tmpfiles.d/uroce.conf
$PREFIX/lib/wireshark/plugins/uroce.lua
$PREFIX/libexec/uroce/uroce-capture
$PREFIX/libexec/uroce/uroce-doctor
$PREFIX/libexec/uroce/uroce-down
$PREFIX/libexec/uroce/uroce-env
$PREFIX/libexec/uroce/uroce-fault
$PREFIX/libexec/uroce/uroce-gid
$PREFIX/libexec/uroce/uroce-inspect
$PREFIX/libexec/uroce/uroce-launch
$PREFIX/libexec/uroce/uroce-lib.sh
$PREFIX/libexec/uroce/uroce-link
$PREFIX/libexec/uroce/uroce-run
$PREFIX/libexec/uroce/uroce-status
$PREFIX/libexec/uroce/uroce-up
$PREFIX/libexec/uroce/shims/rdma
$PREFIX/sbin/uroced
$PREFIX/share/bash-completion/completions/uroce
$PREFIX/share/man/man1/uroce.1
$PREFIX/share/man/man3/urocedv.3
$PREFIX/share/man/man8/uroced.8
EOT
(cd "$STAGE" && find . -type f -o -type l) | sed 's|^\.||' | LC_ALL=C sort >"$T/installed"
LC_ALL=C sort "$T/expected" >"$T/expected.sorted"
diff "$T/expected.sorted" "$T/installed" || fail "installed files differ from the expected list (diff above)"
echo "ok: exactly the $(wc -l <"$T/installed") expected files"
expect_eq "driver file" "driver $PREFIX/lib/libibverbs/liburoce" "$(grep '^driver' "$STAGE/etc/libibverbs.d/uroce.driver")"
expect_eq "uroce --version" "uroce $VERSION" "$("$STAGE$PREFIX/bin/uroce" --version)"
expect_eq "uroced --version" "uroced $VERSION" "$("$STAGE$PREFIX/sbin/uroced" --version)"

# The man pages render, and uroce(1) covers every subcommand.
for page in "$STAGE$PREFIX/share/man/man1/uroce.1" "$STAGE$PREFIX/share/man/man8/uroced.8" \
	"$STAGE$PREFIX/share/man/man3/urocedv.3"; do
	MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l "$page" 2>"$T/man.err" | col -b >"$T/man.txt"
	[ ! -s "$T/man.err" ] || { cat "$T/man.err"; fail "man -l ${page##*/} warned"; }
	grep -q '^NAME' "$T/man.txt" && grep -q '^SYNOPSIS' "$T/man.txt" || fail "man -l ${page##*/}: no NAME/SYNOPSIS"
	echo "ok: man -l ${page##*/} renders ($(wc -l <"$T/man.txt") lines, no warning)"
done
MANWIDTH=80 man -l "$STAGE$PREFIX/share/man/man1/uroce.1" 2>/dev/null | col -b >"$T/uroce1.txt"
for c in "$STAGE$PREFIX"/libexec/uroce/uroce-*; do
	c=${c##*/uroce-}
	case $c in launch | lib.sh) continue ;; esac
	grep -qE "^ {7}$c( |\$)" "$T/uroce1.txt" || fail "uroce(1) has no entry for the subcommand '$c'"
done
echo "ok: uroce(1) has an entry for every installed subcommand"
comp=$STAGE$PREFIX/share/bash-completion/completions/uroce
expect_eq "bash completion of 'uroce d'" "down doctor" \
	"$(bash -c ". '$comp'; COMP_WORDS=(uroce d); COMP_CWORD=1; _uroce; echo \"\${COMPREPLY[*]}\"")"
expect_eq "bash completion of 'uroce link set uroce0 '" "up down" \
	"$(bash -c ". '$comp'; COMP_WORDS=(uroce link set uroce0 ''); COMP_CWORD=4; _uroce; echo \"\${COMPREPLY[*]}\"")"

# 3. the login-shell path, in a user+mount namespace as an unprivileged user
if [ ! -d "$PREFIX" ]; then
	echo "SKIP: $PREFIX does not exist (nothing to mount the staged install over)"
	exit 77
fi
NS=$T/ns
mkdir "$NS"
nsuser=$(id -un)
[ "$(id -u)" != 0 ] || { nsuser=nobody; chown nobody "$NS"; }
as() { if [ "$(id -u)" = 0 ]; then setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups -- "$@"; else "$@"; fi; }
as unshare --user --map-root-user --mount true 2>/dev/null || { echo "SKIP: user namespaces not allowed"; exit 77; }
PORT=$(( 30000 + $(rand16) % 20000 ))
TCP=$(free_tcp_port)
export STAGE PREFIX NS PORT TCP
as unshare --user --map-root-user --mount sh "$top_srcdir/tests/it_install.sh" inner
expect_eq "namespace part as $nsuser" 0 $?

mk uninstall >"$T/uninstall.log" 2>&1 || { cat "$T/uninstall.log"; fail "make uninstall"; }
left=$(cd "$STAGE" && find . -type f -o -type l)
expect_eq "files left after make uninstall" "" "$left"
left=$(cd "$STAGE" && find . -type d -path '*uroce*')
expect_eq "uroce's own directories left after make uninstall" "" "$left"
