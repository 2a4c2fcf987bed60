#!/bin/sh
# docs_refs.sh - the tree cites only documents it contains.
#
# Over every tracked text file (git ls-files), fails on
#   1. a `*.md` name that is neither a tracked path from the top of the tree
#      nor one relative to the citing file's folder (`docs/wire-format.md`,
#      `README.md`, `provider.md` from inside docs/);
#   2. a citation of the design notes the code was written from, which live
#      outside the repository: the reference folder and its file names
#      (roce-wire, provider-abi/clients/contract outside docs/), DESIGN,
#      STYLE, /work/shared;
#   3. a history token: "issue N", "hNa"-style task names, "review finding".
# Each hit is printed as FILE:LINE: TEXT with the rule it breaks.
#
# Folders listed in DOCS_REFS_SKIP (space separated, default empty: the
# whole tree is checked) are left out. tests/provider_tsv_copy.sh compares the shipped layout
# table with the one it was copied from, when that exists next to the
# checkout, so it names that path on purpose and is left out of rule 2.
# Not a git checkout (a release tarball): exit 77, the harness's SKIP.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 99
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" != "$(pwd -P)" ]; then
	echo "SKIP: $top is not the top of a git checkout"
	exit 77
fi
skip=${DOCS_REFS_SKIP-}
out=$(mktemp) || exit 99
trap 'rm -f "$out" "$out.1" "$out.2"' EXIT
# The pathspec: everything tracked but data, the skipped folders and this file.
set -- . ':!tests/fuzz-corpus' ':!tests/data' ':!*.pcap' ':!*.tsv' ':!tests/docs_refs.sh'
for d in $skip; do
	set -- "$@" ":!$d"
done

# Rule 1: *.md names must resolve.
git grep -I -n -o -E '[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md\b' -- "$@" |
while IFS=: read -r f line ref; do
	case $ref in
	*://*|/usr/*) continue ;;
	esac
	r=${ref#./}
	r=${r#top_srcdir/}
	r=${r#srcdir/}
	[ -f "$r" ] && continue
	[ -f "$(dirname "$f")/$r" ] && continue
	echo "$f:$line: cites $ref, which is not in the repository"
done > "$out.1"

# Rules 2 and 3: one extended regex per rule, with the reason.
check() { # check REGEX WHY [EXTRA PATHSPEC]
	re=$1 why=$2
	shift 2
	git grep -I -n -E -e "$re" -- "$@" | sed "s|\$|  [$why]|"
}
{
	check '/work/shared' 'a path outside the repository' "$@" ':!tests/provider_tsv_copy.sh'
	check '(^|[^a-z/])reference/' 'the external reference folder' "$@"
	check 'roce-wire' 'an external document (use docs/wire-format.md, or docs/cqe-format.md for its §4)' "$@"
	check '(^|[^/a-z-])(provider-abi|clients|contract)\.md' 'an external document (cite docs/NAME.md)' "$@"
	check 'DESIGN( §|\.md)|STYLE\.md' 'an external document' "$@"
	check '[Ii]ssue [0-9]' 'a history token' "$@"
	check "\\(h[0-9]+[a-z]?\\)|\\bh[0-9]+[a-z]?'s\\b|\\bby h[0-9]" 'a history token' "$@"
	check 'review finding|finding [0-9]+ of' 'a history token' "$@"
} > "$out.2"

bad=0
n=$(cat "$out.1" "$out.2" | wc -l)
if [ "$n" -ne 0 ]; then
	cat "$out.1" "$out.2"
	echo "FAIL: $n reference(s) to documents outside the repository or history tokens"
	bad=1
else
	echo "ok: $(git ls-files -- "$@" | wc -l) files cite only documents in the repository${skip:+ (not checked: $skip)}"
fi
exit $bad
