# guest-lib.sh: sourced by the commands the host sends to the rxe guest
# (/share/q/N.sh).  The share is /share; results go to /share/res.

# gid_index GID: the index of rxe0's RoCE v2 GID equal to GID (sysfs form,
# eight groups of four hex digits); fails if there is none.  rxe's table has
# 1024 entries: walk it in order with the shell's own read (no process per
# entry; under TCG each one costs tens of milliseconds).
gid_index() {
	_d=/sys/class/infiniband/rxe0/ports/1
	_i=0
	while [ -e "$_d/gids/$_i" ]; do
		read -r _g <"$_d/gids/$_i"
		if [ "$_g" = "$1" ]; then
			read -r _t <"$_d/gid_attrs/types/$_i" 2>/dev/null
			[ "$_t" = "RoCE v2" ] && { echo "$_i"; return 0; }
		fi
		_i=$((_i + 1))
	done
	echo "guest: no RoCE v2 GID $1 on rxe0" >&2
	return 1
}

# listening TCPPORT: true once a TCP socket listens on TCPPORT.
listening() {
	netstat -ltn 2>/dev/null | awk -v p=":$1" '$1 ~ /^tcp/ && substr($4, length($4) - length(p) + 1) == p { f = 1 } END { exit !f }'
}

# start_listener NAME SECONDS LISTENING PORT CMD...: CMD in the background
# under timeout (output /share/res/NAME.out, its pid NAME.pid, exit status
# NAME.rc once it ends); returns when the function LISTENING says PORT
# listens, or fails after 30 s.
start_listener() {
	_name=$1 _to=$2 _listening=$3 _port=$4
	shift 4
	mkdir -p /share/res
	(
		timeout "$_to" "$@" >"/share/res/$_name.out" 2>&1 &
		echo $! >"/share/res/$_name.pid"
		wait $!
		echo $? >"/share/res/$_name.rc.tmp"
		mv "/share/res/$_name.rc.tmp" "/share/res/$_name.rc"
	) &
	_n=0
	while [ $_n -lt 300 ]; do
		"$_listening" "$_port" && return 0
		[ -e "/share/res/$_name.rc" ] && break
		sleep 0.1
		_n=$((_n + 1))
	done
	echo "guest: $_name never listened on port $_port ($_listening)"
	return 1
}

# server NAME SECONDS TCPPORT CMD...: CMD, returning once it listens on TCPPORT.
server() {
	_s_name=$1 _s_to=$2 _s_port=$3
	shift 3
	start_listener "$_s_name" "$_s_to" listening "$_s_port" "$@"
}

# cm_listening PORT: true once an rdma_cm id of the guest listens on PORT
# (the kernel's resource tracking, `rdma resource show cm_id`).
cm_listening() {
	rdma resource show cm_id 2>/dev/null | grep "state LISTEN" | grep -q "src-addr [^ ]*:$1 "
}

# cm_server NAME SECONDS PORT CMD...: CMD, returning once an rdma_cm id
# listens on PORT.
cm_server() {
	_s_name=$1 _s_to=$2 _s_port=$3
	shift 3
	start_listener "$_s_name" "$_s_to" cm_listening "$_s_port" "$@" || { rdma resource show cm_id; return 1; }
}
