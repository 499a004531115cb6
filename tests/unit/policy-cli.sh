#!/usr/bin/env bash
# Black-box: `corral policy show` round-trips byte for byte, and
# `corral policy check` exits 0, or 125 with the named-key message.
set -u
: "${CORRAL:?CORRAL must point at the built corral}"
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect NAME WANT_RC WANT_STDERR CMD...  (stderr compared exactly; '-' skips)
expect() {
	local name=$1 want_rc=$2 want_err=$3 rc
	shift 3
	"$@" >out 2>err
	rc=$?
	[ "$rc" = "$want_rc" ] || fail "$name: exit $rc, expected $want_rc ($(cat err))"
	if [ "$want_err" != - ] && [ "$(cat err)" != "$want_err" ]; then
		fail "$name: stderr '$(cat err)', expected '$want_err'"
	fi
}

# Round trip through a pipe and through a file, defaults and odd values.
"$CORRAL" policy show >a.json || fail "policy show"
"$CORRAL" policy show | "$CORRAL" policy show --policy /dev/stdin >b.json || fail "show | show --policy /dev/stdin"
cmp -s a.json b.json || fail "defaults do not round-trip: $(diff a.json b.json)"
[ "$(tail -c1 a.json | od -An -c | tr -d ' ')" = '\n' ] || fail "no trailing newline"
grep -q "\"root\": \"$tmp\"" a.json || fail "policy show does not fill root with the current directory"

"$CORRAL" policy show --timeout 0.1 --memory 1536K --env FOO=bar --rw sub --net loopback >c.json || fail "show with flags"
"$CORRAL" policy show --policy c.json >d.json || fail "show --policy c.json"
cmp -s c.json d.json || fail "odd values do not round-trip: $(diff c.json d.json)"
grep -q '"timeout": 0.1,' c.json || fail "timeout 0.1 not shortest: $(grep timeout c.json)"
grep -q '"memory": "1536K",' c.json || fail "memory 1536K not canonical"
grep -q "\"$tmp/sub\"" c.json || fail "--rw sub not made absolute"

# Flags win over the file.
printf '{"timeout": 5, "network": "host"}\n' >five.json
"$CORRAL" policy show --policy five.json --timeout 7 >e.json || fail "show --policy five.json --timeout 7"
grep -q '"timeout": 7,' e.json || fail "--timeout did not win over the file"
grep -q '"network": "host",' e.json || fail "file value lost"

# policy check
expect "check valid" 0 "" "$CORRAL" policy check a.json
[ -s out ] && fail "check valid printed '$(cat out)'"
expect "check missing" 125 "corral: policy.json: No such file or directory" "$CORRAL" policy check policy.json
printf '{"limits": {"memroy": "1G"}}\n' >unknown.json
expect "check unknown key" 125 "corral: limits.memroy: unknown key" "$CORRAL" policy check unknown.json
printf '{\n  "timeout": 1,\n    ]\n}\n' >syntax.json
expect "check syntax" 125 "corral: syntax.json:3:5: string or '}' expected near ']'" "$CORRAL" policy check syntax.json
printf '{"timeout": "soon"}\n' >type.json
expect "check type" 125 "corral: timeout: bad number 'soon' (expected digits with an optional decimal point, e.g. 0.5)" \
	"$CORRAL" policy check type.json
printf '{"timeout": true}\n' >type2.json
expect "check wrong type" 125 "corral: timeout: expected a number" "$CORRAL" policy check type2.json
printf '{"fs": {"read_write": ["rel"]}}\n' >rel.json
expect "check relative" 125 "corral: fs.read_write[0]: 'rel' is not an absolute path" "$CORRAL" policy check rel.json
printf '{"provider": "podman"}\n' >prov.json
expect "check provider" 125 "corral: provider: unknown value 'podman' (expected local|docker|auto)" "$CORRAL" policy check prov.json
expect "check stdin" 0 "" sh -c "\"$CORRAL\" policy check /dev/stdin <a.json"

# --json error object
"$CORRAL" policy check --json unknown.json >out 2>err
rc=$?
[ "$rc" = 125 ] || fail "check --json: exit $rc"
[ "$(cat out)" = '{"error": {"code": "policy", "message": "limits.memroy: unknown key"}}' ] ||
	fail "check --json: '$(cat out)'"
"$CORRAL" policy check --json a.json >out 2>err || fail "check --json valid"
[ "$(cat out)" = '{"valid": true}' ] || fail "check --json valid: '$(cat out)'"

# Bad flags name the option.
expect "show --memory 12Q" 125 \
	"corral: --memory: bad size '12Q' (expected an integer with an optional K/M/G/T suffix, e.g. 512M)" \
	"$CORRAL" policy show --memory 12Q
expect "show --timeout 0" 125 "corral: --timeout: must be greater than 0" "$CORRAL" policy show --timeout 0
expect "show --net wifi" 125 "corral: --net: unknown value 'wifi' (expected none|loopback|host|allow)" \
	"$CORRAL" policy show --net wifi

# Every JSON example in docs/policy.md is a valid policy.
if [ -n "${CORRAL_SRCDIR:-}" ] && [ -f "$CORRAL_SRCDIR/docs/policy.md" ]; then
	awk '/^```json$/ {n++; f = "doc-example-" n ".json"; next} /^```$/ {f = ""} f {print > f}' \
		"$CORRAL_SRCDIR/docs/policy.md"
	ls doc-example-*.json >/dev/null 2>&1 || fail "no JSON example found in docs/policy.md"
	for f in doc-example-*.json; do
		[ -f "$f" ] || continue
		expect "docs example $f" 0 "" "$CORRAL" policy check "$f"
	done
fi

if [ "$fails" -gt 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "policy-cli: all passed"
