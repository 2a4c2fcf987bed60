# bash completion for uroce(1): subcommands, their options, device names.
_uroce_devices()
{
	local d=${UROCE_RUN_DIR:-}
	if [ -z "$d" ]; then
		if [ "$(id -u)" = 0 ] && [ -d /run/uroce ]; then d=/run/uroce; else d=${XDG_RUNTIME_DIR:-/tmp}/uroce-$(id -u); fi
	fi
	local f
	for f in "$d"/*.conf; do
		[ -e "$f" ] && f=${f##*/} && echo "${f%.conf}"
	done
}

_uroce()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local cmds="up down env run status link capture fault gid inspect doctor help"
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$cmds --version --help" -- "$cur"))
		return
	fi
	case $prev in
	--dev) COMPREPLY=($(compgen -W "$(_uroce_devices)" -- "$cur")); return ;;
	--pcap) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	esac
	case ${COMP_WORDS[1]} in
	up) COMPREPLY=($(compgen -W "--dev --addr --port --mtu --gid-tbl-len --pcap --loss --seed
		--clock-khz --clock-bits --max-clients-per-user --max-pd-per-user --max-cq-per-user
		--max-qp-per-user --max-mr-per-user --max-ah-per-user --help" -- "$cur")) ;;
	down) COMPREPLY=($(compgen -W "--dev --all --help" -- "$cur")) ;;
	env | status) COMPREPLY=($(compgen -W "--dev --help" -- "$cur")) ;;
	doctor) COMPREPLY=($(compgen -W "--help" -- "$cur")) ;;
	run)
		if [ "$COMP_CWORD" -eq 2 ]; then
			COMPREPLY=($(compgen -c -W "--" -- "$cur"))
		else
			COMPREPLY=($(compgen -c -f -- "$cur"))
		fi ;;
	link)
		case $COMP_CWORD in
		2) COMPREPLY=($(compgen -W "set show" -- "$cur")) ;;
		3) COMPREPLY=($(compgen -W "$(_uroce_devices)" -- "$cur")) ;;
		4) COMPREPLY=($(compgen -W "up down" -- "$cur")) ;;
		esac ;;
	capture)
		case $COMP_CWORD in
		2) COMPREPLY=($(compgen -W "start stop" -- "$cur")) ;;
		3) COMPREPLY=($(compgen -W "$(_uroce_devices)" -- "$cur")) ;;
		*) COMPREPLY=($(compgen -f -- "$cur")) ;;
		esac ;;
	inspect) COMPREPLY=($(compgen -f -W "--json --summary --flows --port" -- "$cur")) ;;
	esac
}
complete -F _uroce uroce
