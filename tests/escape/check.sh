#!/usr/bin/env bash
# `corral check` as one layer of the suite: every promise held under the
# defaults and under --net host, a report that names each canary, and a
# scratch directory that is gone afterwards.
. "$(dirname "$0")/lib.sh"
cd /tmp || exit 1

for net in none host; do
	out=$("$C" check --json --net "$net")
	rc=$?
	if [ $rc -ne 0 ]; then
		bad "check --net $net exits $rc"
		echo "$out" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
for p in d.get("promises", []):
    for c in p["canaries"]:
        if c["result"] in ("broken", "inconclusive"):
            print("   ", p["id"], c["name"], c["result"], c["observed"])' 2>/dev/null
		continue
	fi
	ok "check --net $net exits 0"
	echo "$out" | "$PY" -c '
import json, sys
net = sys.argv[1]
d = json.load(sys.stdin)
assert d["held"] is True, "held is not true"
ids = {p["id"]: p for p in d["promises"]}
for want in ("fs.write", "fs.read", "net.no_inet", "net.unix", "syscall.bypass", "proc.isolation",
             "tty.no_injection", "priv.none", "lifetime", "leak.fds", "leak.env", "limits.memory",
             "limits.cpu", "limits.processes", "limits.file_size", "limits.open_files", "limits.output"):
    assert want in ids, want + " missing"
for p in d["promises"]:
    assert p["state"] in ("held", "not_applicable"), p
    assert p["canaries"], p["id"] + " has no canary"
    for c in p["canaries"]:
        assert c["name"] and c["observed"], c
# What must hold whatever the network mode.
for must in ("fs.write", "fs.read", "proc.isolation", "priv.none", "lifetime", "leak.fds", "leak.env"):
    assert ids[must]["state"] == "held", must + " is " + ids[must]["state"]
if net == "none":
    assert ids["net.no_inet"]["state"] == "held"
else:
    assert ids["net.no_inet"]["state"] == "not_applicable"
    # Pathname Unix sockets outside reach the command under host (below ABI 9): never "held".
    assert ids["net.unix"]["state"] == "not_applicable", ids["net.unix"]
import os
assert not os.path.exists(d["scratch"]), "scratch directory left behind: " + d["scratch"]
' "$net" && ok "check --net $net: report shape and states" || bad "check --net $net: report"
done

# Best-effort on a kernel that cannot keep a promise (Landlock ABI 2
# pretended: no truncate rule): the promise whose canary got through is
# reported not applicable with the reason, never "held" on the strength of
# its other canaries; the text says the dropped ones do not hold.
out=$(CORRAL_TEST_LANDLOCK_ABI=2 "$C" check --json --compat best-effort)
echo "$out" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
ids = {p["id"]: p for p in d["promises"]}
w = ids["fs.write"]
assert w["state"] == "not_applicable", w["state"]
assert "fs.truncate" in w["why"] and "best-effort" in w["why"], w["why"]
assert any("fs.truncate" in x for x in d["dropped"]), d["dropped"]
assert ids["fs.read"]["state"] == "held", ids["fs.read"]["state"]
' && ok "check best-effort: a dropped promise is not reported held" || bad "check best-effort: $(head -c 400 <<<"$out")"
out=$(CORRAL_TEST_LANDLOCK_ABI=2 "$C" check --compat best-effort)
[[ $out == *"the dropped ones above do not"* ]] && ok "check best-effort: the text says what does not hold" ||
	bad "check best-effort text: $(tail -2 <<<"$out")"

# Text output, exit code on a usage error, --help mentions the scratch root.
out=$("$C" check) && ok "check (text) exits 0" || { bad "check (text) failed"; echo "$out"; }
"$C" check --bogus >/dev/null 2>&1
[ $? -eq 125 ] && ok "check --bogus exits 125" || bad "check --bogus does not exit 125"
"$C" check --help | grep -q "scratch" && ok "check --help explains the scratch root" || bad "check --help"
out=$("$C" check --json --provider docker 2>/dev/null)
[ $? -eq 125 ] && echo "$out" | grep -q '"unsupported"' && ok "check --provider docker: unsupported, 125" ||
	bad "check --provider docker: [$out]"

# A policy that grants /tmp: the outside directory must not be inside it.
out=$("$C" check --json --rw /tmp)
[ $? -eq 0 ] && echo "$out" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
assert not d["scratch"].startswith("/tmp/"), d["scratch"]
assert all(p["state"] == "held" for p in d["promises"] if p["id"] in ("fs.write", "fs.read"))
' && ok "check --rw /tmp: scratch elsewhere, fs promises still proven" || bad "check --rw /tmp: $out"

# A broken promise is reported as broken, with exit 1: best-effort on a pretended
# ABI 2 drops fs.truncate; the dropped promise is not applicable, not held.
out=$(CORRAL_TEST_LANDLOCK_ABI=2 "$C" check --json --compat best-effort)
echo "$out" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
assert any("fs.truncate" in l for l in d["dropped"]), d["dropped"]
trunc = [c for p in d["promises"] for c in p["canaries"] if c["name"] == "truncate"][0]
assert trunc["result"] == "not_applicable" and "dropped" in trunc["observed"], trunc
' && ok "best-effort: dropped promise reported as such" || bad "best-effort report: $out"
CORRAL_TEST_LANDLOCK_ABI=2 "$C" check --json >/dev/null 2>&1
[ $? -eq 125 ] && ok "strict on a pretended ABI 2: refused (125)" || bad "strict on ABI 2 not refused"
# --user root keeps uid 0: "no privilege" is then not applicable, with the
# reason, never held on its capability canaries alone; without it, held (control).
if is_root; then
	RR=$(mktemp -d /tmp/corral-check-root.XXXXXX); chmod 755 "$RR"
	for u in root default; do
		if [ $u = root ]; then args=(--user root); else args=(); chown 65534 "$RR"; fi
		out=$("$C" check --json --root "$RR" "${args[@]}")
		st=$(echo "$out" | "$PY" -c 'import json,sys; print([p["state"] for p in json.load(sys.stdin)["promises"] if p["id"] == "priv.none"][0])')
		if [ $u = root ]; then want=not_applicable name="check --user root: priv.none not applicable"
		else want=held name="check as nobody: priv.none held (control)"; fi
		[ "$st" = "$want" ] && ok "$name" || bad "$name: got $st"
	done
	rm -rf "$RR"
fi
finish
