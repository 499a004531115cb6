#!/bin/bash
# Black-box test of `corral resolve`: output, exit codes (0 / 1 / 125),
# messages and JSON, against a temporary root this script builds.
set -u
CORRAL=${CORRAL:?CORRAL must name the built corral binary}
fails=0
n=0

ws=$(mktemp -d "${TMPDIR:-/tmp}/corral-resolve-cli-XXXXXX")
evil="$ws-evil"
trap 'rm -rf -- "$ws" "$evil"' EXIT
mkdir -p "$ws/sub" "$evil"
echo ok > "$ws/ok.txt"
echo x > "$evil/x"
ln -s / "$ws/out_link"
ln -s ok.txt "$ws/in_link"
ln -s sub "$ws/dirlink"
mkfifo "$ws/fifo"
echo nl > "$ws/new"$'\n'"line"

# expect RC STDOUT-PATTERN STDERR-PATTERN -- ARGS...  (patterns: bash globs, '' = must be empty)
expect() {
	local want_rc=$1 want_out=$2 want_err=$3
	shift 4
	local out err rc
	n=$((n + 1))
	out=$(timeout 10 "$CORRAL" resolve "$@" 2>"$ws.err")
	rc=$?
	err=$(cat "$ws.err")
	rm -f "$ws.err"
	if [[ $rc != "$want_rc" ]] || [[ $out != $want_out ]] || [[ $err != $want_err ]]; then
		echo "FAIL: corral resolve $*"
		echo "  rc=$rc (want $want_rc)"
		echo "  stdout=[$out] (want [$want_out])"
		echo "  stderr=[$err] (want [$want_err])"
		fails=$((fails + 1))
	fi
}

# Resolved: the host path, exit 0, nothing on stderr.
expect 0 "$ws/ok.txt" '' -- --root "$ws" ok.txt
expect 0 "$ws/ok.txt" '' -- --root "$ws" sub/../ok.txt
expect 0 "$ws/ok.txt" '' -- --root "$ws/" "$ws/ok.txt"
expect 0 "$ws" '' -- --root "$ws" .
expect 0 "$ws" '' -- --root "$ws" "$ws"
expect 0 "$ws/sub" '' -- --root "$ws" sub/
expect 0 "$ws/new.txt" '' -- --root "$ws" new.txt
expect 0 "$ws/sub/new.txt" '' -- --root "$ws" sub/new.txt
expect 1 '' $'corral: new?line: the host path holds a newline*' -- --root "$ws" "new"$'\n'"line"
expect 0 "{\"path\": \"$ws/new?nline\"}" '' -- --root "$ws" --json "new"$'\n'"line"
expect 0 "$ws/ok.txt" '' -- "$ws/ok.txt" --root "$ws"
expect 0 "$ws/ok.txt" '' -- --root "$ws" --must-exist ok.txt
expect 0 "{\"path\": \"$ws/ok.txt\"}" '' -- --root "$ws" --json ok.txt

# Refused: exit 1, "corral: PATH: reason" on stderr, nothing on stdout.
expect 1 '' 'corral: ..: escapes the root' -- --root "$ws" ..
expect 1 '' 'corral: ../x: escapes the root' -- --root "$ws" ../x
expect 1 '' 'corral: a/../../x: escapes the root' -- --root "$ws" a/../../x
expect 1 '' "corral: $evil/x: escapes the root*" -- --root "$ws" "$evil/x"
expect 1 '' 'corral: /etc/passwd: escapes the root*' -- --root "$ws" /etc/passwd
expect 1 '' 'corral: /proc/self/root/etc/passwd: escapes the root*' -- --root "$ws" /proc/self/root/etc/passwd
expect 1 '' 'corral: out_link/etc/passwd: symlink*' -- --root "$ws" out_link/etc/passwd
expect 1 '' 'corral: in_link: symlink*' -- --root "$ws" in_link
expect 1 '' 'corral: dirlink/x: symlink*' -- --root "$ws" dirlink/x
expect 1 '' 'corral: fifo: *FIFO*' -- --root "$ws" fifo
expect 1 '' 'corral: missing/x: does not exist' -- --root "$ws" missing/x
expect 1 '' 'corral: new.txt: does not exist' -- --root "$ws" --must-exist new.txt
expect 1 '' 'corral: : empty path' -- --root "$ws" ''
expect 1 '' 'corral: ok.txt/: not a directory' -- --root "$ws" ok.txt/
expect 1 '' 'corral: root/etc: magic link*' -- --root /proc/self root/etc
expect 1 '{"error": {"code": "escape", "message": "../x: escapes the root"}}' '' -- --root "$ws" --json ../x
expect 1 '{"error": {"code": "refused", "message": "in_link: symlink*"}}' '' -- --root "$ws" --json in_link
expect 1 '{"error": {"code": "not_found", "message": "missing/x: does not exist"}}' '' -- --root "$ws" --json missing/x

# A newline in the path: plain output would split it (and $(...) would drop
# a trailing one, "..\n" reading as the root's parent); refused there, carried by --json.
expect 1 '' $'corral: ..?: the host path holds a newline*' -- --root "$ws" $'..\n'

# Usage errors: exit 125.
expect 125 '' 'corral: resolve: missing --root*' -- ok.txt
expect 125 '' 'corral: resolve: missing PATH*' -- --root "$ws"
expect 125 '' 'corral: resolve: unknown option --bogus (see corral resolve --help)' -- --root "$ws" --bogus ok.txt
expect 125 '' 'corral: resolve: unknown option --roo; did you mean --root?' -- --roo "$ws" ok.txt
expect 125 '' 'corral: resolve: option --root needs an argument' -- --root
expect 125 '' 'corral: resolve: exactly one PATH*' -- --root "$ws" a b
expect 125 '' "corral: resolve: --root $ws/ok.txt: not a directory" -- --root "$ws/ok.txt" x
expect 125 '' "corral: resolve: --root $ws/nope: No such file or directory" -- --root "$ws/nope" x
expect 125 '{"error": {"code": "usage", "message": "resolve: missing --root*"}}' '' -- --json ok.txt

# --help documents the missing-final-component choice.
n=$((n + 1))
help=$("$CORRAL" resolve --help) || { echo "FAIL: --help exit"; fails=$((fails + 1)); }
if [[ $help != *"need not exist"* || $help != *"--must-exist"* ]]; then
	echo "FAIL: --help does not document whether PATH must exist"
	fails=$((fails + 1))
fi

echo "$((n - fails))/$n cases passed"
[[ $fails == 0 ]]
