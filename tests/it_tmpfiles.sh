#!/bin/sh
# it_tmpfiles: the one-time root setup that docs/discovery.md gives (a
# tmpfiles.d snippet) really creates /dev/infiniband/uverbs_uroce0 ->
# /dev/null: its lines are taken from the doc and applied by the real
# systemd-tmpfiles to a private root directory.  Exit 77 (automake SKIP)
# without root or without systemd-tmpfiles.
. "$top_srcdir/tests/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (tmpfiles.d lines set owner root)"; exit 77; }
command -v systemd-tmpfiles >/dev/null 2>&1 || { echo "SKIP: systemd-tmpfiles not installed"; exit 77; }

grep -E '^(d|L) /dev/infiniband' "$top_srcdir/docs/discovery.md" >"$T/uroce.conf"
expect_eq "tmpfiles.d lines in docs/discovery.md" 2 "$(wc -l <"$T/uroce.conf")"
cat "$T/uroce.conf"
mkdir "$T/root"
systemd-tmpfiles --root="$T/root" --create "$T/uroce.conf"
expect_eq "systemd-tmpfiles exit" 0 $?
expect_eq "/dev/infiniband mode" "755 directory" "$(stat -c '%a %F' "$T/root/dev/infiniband")"
expect_eq "the node" "symbolic link /dev/null" "$(stat -c '%F' "$T/root/dev/infiniband/uverbs_uroce0") $(readlink "$T/root/dev/infiniband/uverbs_uroce0")"
