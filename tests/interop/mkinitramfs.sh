#!/bin/sh
# mkinitramfs.sh KVER OUT.cpio.gz: the rxe guest's initramfs, built from the
# host's own files: busybox, rdma-core's rxe provider and the verbs programs
# the tests run (with every library ldd names), the kernel modules rdma_rxe,
# virtio_net and 9p need (in modprobe's dependency order), and guest-init.
set -eu
kver=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(mktemp -d "${TMPDIR:-/tmp}/uroce-initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT

# Debian 12 is merged-/usr: keep that layout so ldd's paths resolve as-is.
mkdir -p "$root/usr/bin" "$root/usr/sbin" "$root/usr/lib/x86_64-linux-gnu" "$root/usr/lib64" \
	"$root/etc/libibverbs.d" "$root/proc" "$root/sys" "$root/dev" "$root/tmp" "$root/share" "$root/modules"
for d in bin sbin lib lib64; do ln -s "usr/$d" "$root/$d"; done

# put FILE: copy FILE (symlinks followed) to the same path under $root.
put() {
	case $1 in
	/lib/* | /lib64/* | /bin/* | /sbin/*) _dst=$root/usr$1 ;;
	*) _dst=$root$1 ;;
	esac
	[ -e "$_dst" ] && return 0
	mkdir -p "$(dirname "$_dst")"
	cp -L "$1" "$_dst"
}

# put_elf FILE: FILE and every shared library it needs.
put_elf() {
	put "$1"
	ldd "$1" | awk '/=> \// { print $3 } /^\t\/[^ ]* \(/ { print $1 }' | while read -r _lib; do
		put "$_lib"
	done
}

progs="busybox ibv_devices ibv_devinfo ibv_rc_pingpong ibv_ud_pingpong
	ib_write_bw ib_read_bw ib_send_lat rping rdma ip"
for p in $progs; do
	path=$(command -v "$p") || { echo "mkinitramfs: $p not installed" >&2; exit 1; }
	put_elf "$path"
done
mv "$root/usr/sbin/ip" "$root/usr/bin/ip"
for a in $("$root/usr/bin/busybox" --list); do
	[ -e "$root/usr/bin/$a" ] || ln -s busybox "$root/usr/bin/$a"
done

# rdma-core's rxe provider, found by libibverbs through its .driver file.
provdir=/usr/lib/x86_64-linux-gnu/libibverbs
[ -f "$provdir/librxe-rdmav34.so" ] || { echo "mkinitramfs: $provdir/librxe-rdmav34.so missing (ibverbs-providers)" >&2; exit 1; }
put_elf "$provdir/librxe-rdmav34.so"
cp /etc/libibverbs.d/rxe.driver "$root/etc/libibverbs.d/"

# Modules in load order; the list file tells guest-init what to insmod.
# rxe asks the crypto API for "crc32" (its ICRC) at device creation, which
# no module dependency names: without crc32_generic, rdma link add -> ENOENT.
# rdma_ucm brings the kernel's connection manager (rdma_cm, ib_cm) for rping.
mods="virtio_pci virtio_net 9pnet_virtio 9p crc32_generic rdma_rxe ib_uverbs rdma_ucm"
: >"$root/modules/order"
for m in $mods; do
	modprobe -S "$kver" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
done | while read -r ko; do
	b=$(basename "$ko")
	grep -qx "$b" "$root/modules/order" && continue
	cp "$ko" "$root/modules/$b"
	echo "$b" >>"$root/modules/order"
done

cp "$here/guest-init" "$root/init"
chmod 755 "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out"
