#!/usr/bin/env bash
# The tests cannot pass vacuously: on a scratch copy of the tree, break one
# confinement at a time and check that at least one test fails as root and
# one as nobody. Mutations: skip landlock_restrict_self; drop the socket
# rules from the seccomp filter; skip the orphan sweep; skip the rlimits.
# Run as root from a checkout: bash scripts/mutation-check.sh [MUTATION...]
# Prints, per mutation, each test's result as root and as nobody; exits 1
# when a mutation goes unnoticed by either, or no longer applies (the code
# it edits moved: update the pattern below).
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "mutation-check: run as root (the nobody pass uses setpriv)" >&2; exit 2; }
work=$(mktemp -d /tmp/corral-mutation.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
git -C "$src" ls-files -z --cached --others --exclude-standard | (cd "$src" && xargs -0 tar cf -) | tar xf - -C "$work"
cd "$work"
files=(landlock/landlock.c seccomp/filter.c supervisor/exec/engine.c supervisor/exec/child.c)
mkdir .orig && for f in "${files[@]}"; do cp "$f" ".orig/${f//\//_}"; done

# mutation NAME: apply it (perl -0 substitutions on the pristine files).
mutate() {
	for f in "${files[@]}"; do cp ".orig/${f//\//_}" "$f"; done
	case $1 in
	landlock) perl -0pi -e 's/if \(syscall\(__NR_landlock_restrict_self, ruleset_fd, 0U\) < 0\)/if (0 \&\& syscall(__NR_landlock_restrict_self, ruleset_fd, 0U) < 0)/' landlock/landlock.c ;;
	socket) perl -0pi -e 's/(\t\tint nr;\n\n)(\t\tif \(!corral_sc_rule_applies_unix)/$1\t\tif (!strncmp(rule->syscall, "socket", 6))\n\t\t\tcontinue;\n$2/' seccomp/filter.c ;;
	sweep) perl -0pi -e 's/\t\tsweep\(pid, &owner, &tally\);/\t\t(void)0;/' supervisor/exec/engine.c ;;
	rlimits) perl -0pi -e 's/setrlimit\(i, &c->rlimits->rl\[i\]\) < 0\)/0)/; s/setrlimit\(RLIMIT_NOFILE, &c->rlimits->rl\[RLIMIT_NOFILE\]\) < 0\)/0)/' supervisor/exec/child.c ;;
	none) return 0 ;;
	*) echo "unknown mutation $1" >&2; return 1 ;;
	esac
	for f in "${files[@]}"; do cmp -s "$f" ".orig/${f//\//_}" || return 0; done
	echo "mutation $1 no longer applies: the code it edits changed" >&2
	return 1
}

# The tests each mutation is checked against.
declare -A tests=(
	[landlock]="escape-fs escape-policy-paths isolation landlock-write landlock-read escape-check escape-lib-check"
	[socket]="escape-net seccomp-net net-loopback escape-check escape-lib-check"
	[sweep]="escape-leaks lifecycle escape-check escape-lib-check"
	[rlimits]="escape-limits limits escape-check escape-lib-check"
)
meson setup build -Dtests=enabled >/dev/null || exit 1
status=0
for m in "${@:-landlock socket sweep rlimits}"; do
	for mm in $m; do
		mutate "$mm" || { status=1; continue; }
		ninja -C build >/dev/null || { echo "$mm: build failed"; status=1; continue; }
		chmod -R a+rX build
		echo "== mutation $mm"
		for who in root nobody; do
			wrap=()
			[ $who = nobody ] && wrap=(--wrapper "$work/tests/as-nobody.sh")
			# shellcheck disable=SC2086
			out=$(meson test -C build --num-processes 1 "${wrap[@]}" ${tests[$mm]} 2>&1 | grep -E '^ *[0-9]+/[0-9]+ ' | awk '{print $4 ":" $5}' | tr '\n' ' ')
			echo "$who: $out"
			case $out in *FAIL* | *TIMEOUT*) ;; *) echo "$mm: NOT CAUGHT as $who"; status=1 ;; esac
		done
	done
done
exit $status
