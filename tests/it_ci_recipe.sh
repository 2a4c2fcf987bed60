#!/bin/sh
# it_ci_recipe: the CI recipes of docs/ci.md, taken from the page between
# their "<!-- recipe: NAME -->" and "<!-- end recipe -->" marks, run here:
# GitHub Actions' run: blocks and GitLab CI's script: entries in order, with
# the shell each service uses, in a private mount and network namespace
# whose /usr/local and /etc are overlays and /run, /opt and /dev/infiniband
# tmpfs, so that `make install`, `useradd uroce` and `uroce up` leave the
# host as it was.  GitHub steps that call sudo run as root (sudo passes
# through), the others as nobody; GitLab's as root.  Replaced: `git clone
# URL DIR` makes DIR a link to this source tree (a real clone means a full
# build); apt-get installs nothing (it names the packages it would add).
# Checks: every step exits 0; each of the four ibv_rc_pingpong runs printed
# exactly "8192000 bytes in ..." and "1000 iters in ..." on both sides; the
# login-shell steps fail once the device is down.
# Exit 77 (SKIP) when not root (the recipes install into /usr/local and /etc,
# which only root can overlay) or without unshare.

if [ "${1:-}" = inner ]; then
	# In the namespaces. T, SRC set by the caller.
	set -u
	no() { echo "FAIL: it_ci_recipe: $*"; exit 1; }
	ok() { echo "ok: $*"; }
	ip link set lo up || no "lo up"
	for d in etc usr/local; do
		n=$(echo "$d" | tr / _)
		mkdir -p "$T/ov/$n/up" "$T/ov/$n/work"
		mount -t overlay overlay -o "lowerdir=/$d,upperdir=$T/ov/$n/up,workdir=$T/ov/$n/work" "/$d" ||
			no "overlay on /$d"
	done
	mount -t tmpfs -o mode=755 tmpfs /run || no "tmpfs /run"
	mkdir -p /opt && mount -t tmpfs -o mode=755 tmpfs /opt || no "tmpfs /opt"
	if [ -d /dev/infiniband ]; then
		mount -t tmpfs -o mode=755 tmpfs /dev/infiniband || no "tmpfs /dev/infiniband"
	else
		# no /dev/infiniband to mount over: a private /dev with the basics
		mkdir "$T/hostdev" && mount --rbind /dev "$T/hostdev" && mount -t tmpfs -o mode=755 tmpfs /dev ||
			no "private /dev"
		for n in null zero full random urandom tty; do
			touch "/dev/$n" && mount --bind "$T/hostdev/$n" "/dev/$n"
		done
		ln -s /proc/self/fd /dev/fd && ln -s fd/0 /dev/stdin && ln -s fd/1 /dev/stdout && ln -s fd/2 /dev/stderr
		mkdir /dev/shm /dev/pts /dev/infiniband && mount -t tmpfs -o mode=1777 tmpfs /dev/shm
	fi
	# no daemon outlives the test, whatever fails
	trap 'env -i PATH=/usr/bin:/bin /usr/local/bin/uroce down --all >/dev/null 2>&1' EXIT
	ok "namespace: overlays on /etc and /usr/local; tmpfs /run, /opt, /dev/infiniband; own loopback"

	# The substitutes (docs/ci.md, "What the test runs").
	mkdir -p "$T/bin" "$T/home" "$T/gh-ws" "$T/gl-ws" "$T/runner"
	realgit=$(command -v git)
	cat >"$T/bin/git" <<EOF
#!/bin/sh
if [ "\$1" = clone ]; then
	for a; do dir=\$a; done
	exec ln -s "$SRC" "\$dir"
fi
exec $realgit "\$@"
EOF
	cat >"$T/bin/sudo" <<'EOF'
#!/bin/sh
exec "$@"
EOF
	cat >"$T/bin/apt-get" <<'EOF'
#!/bin/sh
# `apt-get install PKG...` installs nothing here: it says which of the
# packages are missing (ca-certificates on a minimal root; the clone it
# serves is replaced), and the steps that follow need the rest.
[ "$1" = install ] || exit 0
for p; do
	case $p in -* | install) continue ;; esac
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		echo "apt-get (it_ci_recipe): not installing $p"
done
EOF
	chmod 755 "$T/bin/git" "$T/bin/sudo" "$T/bin/apt-get"
	chown nobody "$T/home" "$T/gh-ws" "$T/runner"
	chmod 755 "$T/bin"

	PATHROOT=$T/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	PATHUSER=$T/bin:/usr/local/bin:/usr/bin:/bin
	# ghstep FILE: one GitHub step as the runner would run it; status out.
	ghstep() {
		if [ -e "$1.shell" ]; then sh_="bash -l"; else sh_="bash --noprofile --norc -eo pipefail"; fi
		chmod 644 "$1"
		if grep -qw sudo "$1"; then
			(cd "$T/gh-ws" && env -i HOME=/root TERM=dumb PATH="$PATHROOT" UROCE_GIT=https://example.org/uroce.git \
				RUNNER_TEMP="$T/runner" GITHUB_WORKSPACE="$T/gh-ws" $sh_ "$1")
		else
			(cd "$T/gh-ws" && setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups -- \
				env -i HOME="$T/home" TERM=dumb PATH="$PATHUSER" UROCE_GIT=https://example.org/uroce.git \
				RUNNER_TEMP="$T/runner" GITHUB_WORKSPACE="$T/gh-ws" $sh_ "$1")
		fi
	}
	# outputs DIR WHAT: each ibv_rc_pingpong output in DIR has the exact lines.
	outputs() {
		for f in server.out client.out login-server.out login-client.out; do
			[ -s "$1/$f" ] || no "$2: no $f"
			[ "$(grep -Ec '^8192000 bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec$' "$1/$f")" = 1 ] &&
				[ "$(grep -Ec '^1000 iters in [0-9.]+ seconds = [0-9.]+ usec/iter$' "$1/$f")" = 1 ] ||
				{ cat "$1/$f"; no "$2: $f has not exactly the 8192000-byte and 1000-iteration lines"; }
			echo "  $f: $(grep -E '^8192000 bytes in ' "$1/$f")"
		done
		ok "$2: both sides of both ibv_rc_pingpong runs: 8192000 bytes, 1000 iters"
	}

	# GitHub Actions: each run: block a step of its own.
	for b in "$T"/github-actions.[0-9][0-9]; do
		ghstep "$b" >"$b.log" 2>&1 || { r=$?; cat "$b" "$b.log"; no "GitHub step $(basename "$b") exited $r"; }
		ok "GitHub step $(basename "$b") ($(head -n 1 "$b" | cut -c1-60))"
	done
	[ -x /usr/local/bin/uroce ] && [ -e /etc/libibverbs.d/uroce.driver ] && [ -e /etc/profile.d/uroce.sh ] ||
		no "the GitHub recipe did not install uroce, its driver file and login snippet"
	outputs "$T/gh-ws" "GitHub recipe"
	login=$(for b in "$T"/github-actions.[0-9][0-9]; do [ -e "$b.shell" ] && echo "$b"; done | tail -n 1)
	[ -n "$login" ] || no "no login-shell step in the GitHub recipe"
	env -i PATH="$PATHROOT" /usr/local/bin/uroce down --all >/dev/null 2>&1 || no "uroce down --all"
	if ghstep "$login" >"$T/neg-gh.log" 2>&1; then
		cat "$T/neg-gh.log"; no "the GitHub login-shell step passed with no device"
	fi
	ok "the GitHub login-shell step fails once uroce0 is down"

	# GitLab CI: every script: entry in one bash session, as root.
	cat "$T"/gitlab-ci.[0-9][0-9] >"$T/gitlab.sh"
	(cd "$T/gl-ws" && env -i HOME=/root TERM=dumb PATH="$PATHROOT" UROCE_GIT=https://example.org/uroce.git \
		CI_PROJECT_DIR="$T/gl-ws" bash -eo pipefail "$T/gitlab.sh") >"$T/gitlab.log" 2>&1 ||
		{ r=$?; cat "$T/gitlab.log"; no "the GitLab script exited $r"; }
	ok "GitLab script: $(ls "$T"/gitlab-ci.[0-9][0-9] | wc -l) entries"
	outputs "$T/gl-ws" "GitLab recipe"
	env -i PATH="$PATHROOT" /usr/local/bin/uroce down --all >/dev/null 2>&1 || no "uroce down --all"
	last=$(ls "$T"/gitlab-ci.[0-9][0-9] | tail -n 1)
	if (cd "$T/gl-ws" && env -i HOME=/root PATH="$PATHROOT" bash -eo pipefail "$last") >"$T/neg-gl.log" 2>&1; then
		cat "$T/neg-gl.log"; no "the GitLab login-shell entry passed with no device"
	fi
	ok "the GitLab login-shell entry fails once uroce0 is down"
	exit 0
fi

. "$top_srcdir/tests/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: the recipes install into /usr/local and /etc: needs root"; exit 77; }
for p in unshare setpriv bash ibv_rc_pingpong; do
	command -v $p >/dev/null 2>&1 || { echo "SKIP: $p not installed"; exit 77; }
done
doc=$top_srcdir/docs/ci.md
# The recipe NAME's blocks: $T/NAME.01, .02, ... (a "run: |" or "- |" key's
# more-indented lines, the indentation removed); NAME.NN.shell when the line
# before the key is "shell: bash -l {0}".
extract() {
	awk -v name="$1" -v out="$T/$1" '
		$0 == "<!-- recipe: " name " -->" { on = 1; next }
		on && $0 == "<!-- end recipe -->" { on = 0; if (inb) close(f); inb = 0 }
		!on || /^```/ { next }
		{
			match($0, /^ */); ind = RLENGTH
			if (inb) {
				if ($0 ~ /^ *$/) { print "" > f; next }
				if (ind > kind) { print substr($0, kind + 3) > f; next }
				close(f); inb = 0
			}
			if ($0 ~ /^ *(run: \||- \|)$/) {
				n++; f = sprintf("%s.%02d", out, n); kind = ind; inb = 1
				if (prev ~ /^ *shell: bash -l /) { print "login" > (f ".shell"); close(f ".shell") }
			}
			prev = $0
		}' "$doc"
}
extract github-actions
extract gitlab-ci
expect_eq "GitHub run: blocks in docs/ci.md" 4 "$(ls "$T"/github-actions.[0-9][0-9] 2>/dev/null | wc -l)"
expect_eq "GitLab script: entries in docs/ci.md" 3 "$(ls "$T"/gitlab-ci.[0-9][0-9] 2>/dev/null | wc -l)"
expect_eq "GitHub login-shell steps" 1 "$(ls "$T"/github-actions.[0-9][0-9].shell 2>/dev/null | wc -l)"
grep -q '^sudo make install sysconfdir=/etc$' "$T/github-actions.01" ||
	fail "first GitHub block" "... sudo make install sysconfdir=/etc" "$(cat "$T/github-actions.01")"
echo "ok: recipes extracted from docs/ci.md"

T=$T SRC=$(cd "$top_srcdir" && pwd -P) timeout "$((240 * ${UROCE_TIMEOUT_FACTOR:-1}))" \
	unshare --mount --net --propagation private sh "$0" inner
rc=$?
expect_eq "it_ci_recipe (namespace) exit status" 0 "$rc"
