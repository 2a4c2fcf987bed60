#!/bin/sh
# cm_mckey: librdmacm multicast joins (rdma_join_multicast, docs/rdma-cm.md
# "Multicast") with rdma-core's unmodified mckey: a receiver and a sender
# process on uroce0, then a receiver on uroce1 (127.0.0.2) and a sender on
# uroce0 with the frames on their VXLAN segment (docs/multicast.md). The
# receiver exits only after exactly -C messages (mckey's poll_cqs); `uroce
# status` counts every datagram sent to the group and delivered.
. "$top_srcdir/tests/lib.sh"

while :; do
	vp=$((20000 + $(rand16) % 40000))
	ss -H -u -a -n 2>/dev/null | awk '{print $4}' | grep -q ":$vp\$" || break
done
up --dev uroce0 --mtu 1024 --vxlan-port "$vp" --vxlan-peer 127.0.0.2
uroce up --dev uroce1 --addr 127.0.0.2 --port "$UROCE_PORT" --mtu 1024 --vxlan-port "$vp" \
	--vxlan-peer 127.0.0.1 >/dev/null || fail "uroce up uroce1"
R="$UROCE run --"

# attached DEV N: until N QPs of DEV are attached to a group (the receiver
# joined; a datagram sent before that reaches nobody), at most 30 s.
attached() {
	_n=0
	until uroce status --dev "$1" | grep -q "^mcast groups=[0-9]* attached=$2 "; do
		[ $_n -lt 300 ] || return 1
		sleep 0.1
		_n=$((_n + 1))
	done
}

# pair NAME RDEV RBIND SBIND GROUP COUNT SIZE: mckey receiver bound to RBIND,
# once joined the sender bound to SBIND; both must exit 0 and print mckey's
# lines for the join and the transfer.
pair() {
	timeout 120 $R mckey -m "$5" -b "$3" -C "$6" -S "$7" >"$T/$1.rcv" 2>&1 &
	_rp=$!
	attached "$2" 1 || { cat "$T/$1.rcv"; fail "$1: the receiver never joined"; }
	timeout 60 $R mckey -m "$5" -b "$4" -s -C "$6" -S "$7" >"$T/$1.snd" 2>&1
	_s=$?
	[ $_s -eq 0 ] || kill $_rp 2>/dev/null
	wait $_rp
	_r=$?
	cat "$T/$1.rcv" "$T/$1.snd"
	expect_eq "$1 receiver exit status" 0 "$_r"
	expect_eq "$1 sender exit status" 0 "$_s"
	expect_line "$1 receiver joined" "$T/$1.rcv" \
		"mckey: joined dgid: ::ffff:$5 mlid 0x0 sl 0"
	expect_line "$1 receiver got them" "$T/$1.rcv" "data transfers complete"
	expect_line "$1 sender joined" "$T/$1.snd" "mckey: joined dgid: ::ffff:$5 mlid 0x0 sl 0"
	expect_line "$1 sender sent them" "$T/$1.snd" "data transfers complete"
	expect_line "$1 receiver done" "$T/$1.rcv" "test complete"
}

mc() { uroce status --dev "$1" | grep '^mcast'; }

# one device: 1000 messages of 1000 bytes (mckey's limit is the active MTU)
pair one uroce0 127.0.0.1 127.0.0.1 224.0.0.91 1000 1000
# every datagram was delivered to both joined QPs' device; the groups were
# left (rdma_leave_multicast) and the QPs detached
expect_eq "uroce0 after one" \
	"mcast groups=0 attached=0 tx=1000 tx_segment=1000 rx_local=1000 rx_segment=0 rx_no_group=0 rx_dropped=0" \
	"$(mc uroce0)"

# two devices: receiver on uroce1, sender on uroce0
pair two uroce1 127.0.0.2 127.0.0.1 224.0.0.92 2000 512
# the sender's own QP was attached too (a full member): whether a datagram
# it sent reached it before it left is a race of its own, so uroce0 counts
# each of the 2000 as delivered, as for no group, or (reaching the sender's
# QP, which has no receive WQE posted: dropped by it, taken by no QP) as
# dropped
expect_eq "uroce0 after two" \
	"mcast groups=0 attached=0 tx=3000 tx_segment=3000 rx_local+rx_no_group+rx_dropped=3000 rx_segment=0" \
	"$(mc uroce0 | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		printf "mcast groups=%s attached=%s tx=%s tx_segment=%s rx_local+rx_no_group+rx_dropped=%d rx_segment=%s\n",
			v["groups"], v["attached"], v["tx"], v["tx_segment"],
			v["rx_local"] + v["rx_no_group"] + v["rx_dropped"], v["rx_segment"] }')"
expect_eq "uroce1 after two" \
	"mcast groups=0 attached=0 tx=0 tx_segment=0 rx_local=0 rx_segment=2000 rx_no_group=1000 rx_dropped=0" \
	"$(mc uroce1)"
