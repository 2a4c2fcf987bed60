#!/bin/sh
# raw_kernel_vxlan: a raw packet QP and the kernel's own UDP stack on one
# VXLAN segment, across two network namespaces (docs/raw-packet.md): uroce0
# in namespace A on a veth (10.77.0.1), a Linux vxlan interface vx0 in
# namespace B (underlay 10.77.0.2, overlay 192.168.77.2) with the same VNI
# and port. A kernel UDP socket in B sends to 192.168.77.1:9999 (uroce0's
# MAC as a static neighbour); the raw QP's rule on UDP 9999 receives the
# frame (with ethtool: checksum offload off on vx0, so the kernel computes
# them, and the raw QP verifies them: IBV_WC_IP_CSUM_OK). The raw QP answers with a UDP frame built with zero
# checksums and IBV_SEND_IP_CSUM; the kernel socket in B receives it (the
# kernel drops an IPv4 header whose checksum is wrong, ip_rcv). Needs root
# (network namespaces, veth, vxlan): exit 77 (SKIP) otherwise.
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null 2>&1; then
	echo "SKIP: raw_kernel_vxlan needs root for network namespaces and a vxlan interface"
	exit 77
fi
if [ -z "${UROCE_RAW_NETNS:-}" ]; then
	UROCE_RAW_NETNS=1 exec unshare -n sh "$0" "$@"
fi
. "$top_srcdir/tests/lib.sh"
ip link set lo up || fail "lo up"
# namespace B: a process that sleeps there; its netns is B
unshare -n sleep 600 &
nsb=$!
sleep 0.5
inb() { nsenter -t "$nsb" -n "$@"; }
# lib.sh's exit trap (daemons down, run dir gone), then B's process
trap 'kill $nsb 2>/dev/null; _lib_exit' EXIT
ip link add vA type veth peer name vB || { echo "SKIP: no veth support"; exit 77; }
ip link set vB netns "$nsb" || fail "veth into namespace B"
ip addr add 10.77.0.1/24 dev vA && ip link set vA up || fail "vA"
inb ip link set lo up
inb ip addr add 10.77.0.2/24 dev vB && inb ip link set vB up || fail "vB"
vp=4789
vni=77
inb ip link add vx0 type vxlan id "$vni" dstport "$vp" local 10.77.0.2 remote 10.77.0.1 dev vB ||
	{ echo "SKIP: no vxlan support in this kernel"; exit 77; }
inb ip link set vx0 address 02:77:00:00:00:02
inb ip addr add 192.168.77.2/24 dev vx0 && inb ip link set vx0 up || fail "vx0"
# with ethtool, the kernel computes its checksums itself (with offload they
# leave vx0 and the veth unfinished, CHECKSUM_PARTIAL, and the raw QP sees
# a partial UDP checksum: no IBV_WC_IP_CSUM_OK)
csum_flags='0x[0-9a-f]*'
if command -v ethtool >/dev/null 2>&1; then
	inb ethtool -K vx0 tx off >/dev/null 2>&1 || fail "ethtool -K vx0 tx off"
	csum_flags=0x10
fi
# uroce0's MAC: 02:00 and the last four bytes of 10.77.0.1
inb ip neigh add 192.168.77.1 lladdr 02:00:0a:4d:00:01 dev vx0 || fail "static neighbour"

up --dev uroce0 --addr 10.77.0.1 --vxlan-port "$vp" --vxlan-vni "$vni" --vxlan-peer 10.77.0.2
uroce status --dev uroce0 | grep '^eth' | grep -q "mac=02:00:0a:4d:00:01 .* vxlan=on " ||
	fail "uroce0's segment" "mac=02:00:0a:4d:00:01 ... vxlan=on" "$(uroce status --dev uroce0 | grep '^eth')"

# the kernel's receiver in B, started first
inb timeout 120 "$PYTHON3" -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("192.168.77.2", 7777))
s.settimeout(90)
d, a = s.recvfrom(2048)
print("kernel got %r from %s:%d" % (d, a[0], a[1]))
' >"$T/kernel.out" 2>&1 &
krx=$!
timeout 120 "$UROCE" run -- "$top_builddir/tests/raw_kernel_peer" 9999 02:00:0a:4d:00:01 192.168.77.1 \
	02:77:00:00:00:02 192.168.77.2 7777 "from a raw QP" >"$T/peer.out" 2>&1 &
peer=$!
n=0
until grep -q ready "$T/peer.out" 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 600 ] || fail "raw_kernel_peer never got ready: $(cat "$T/peer.out")"
	sleep 0.1
done
inb "$PYTHON3" -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("192.168.77.2", 5555))
s.sendto(b"hello from the kernel", ("192.168.77.1", 9999))
' || fail "kernel send"
wait $peer
prc=$?
wait $krx
krc=$?
cat "$T/peer.out" "$T/kernel.out"
expect_eq "raw_kernel_peer exit status" 0 "$prc"
expect_eq "kernel receiver exit status" 0 "$krc"
# wc_flags 0x10 = IBV_WC_IP_CSUM_OK: the kernel's IPv4 and UDP checksums verify
grep -q "^received 63 bytes, udp payload \"hello from the kernel\", wc_flags $csum_flags\$" "$T/peer.out" ||
	fail "the raw QP got the kernel's datagram" "received 63 bytes, udp payload \"hello from the kernel\", wc_flags $csum_flags" "$(cat "$T/peer.out")"
expect_eq "the kernel got the raw QP's datagram" "kernel got b'from a raw QP' from 192.168.77.1:12345" "$(cat "$T/kernel.out")"
