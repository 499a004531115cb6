#!/usr/bin/env bash
# The whole test suite: build with -Werror, run every suite as root (or as
# the invoking user), then the security suites again as the unprivileged
# user nobody, then an ASan+UBSan build of the unit suite, then the fuzzers
# of the untrusted-input parsers, sharing $CORRAL_FUZZ_SECONDS (default 60).
# Ends with what failed (each step, and each test of a meson step by
# name), what passed only on a retry (flaky, named), and one closing line
# "N passed, N failed".
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
fuzz_seconds=${CORRAL_FUZZ_SECONDS:-60}
passed=0 failed=0
failures=() flaky=()
log() { printf '\n== %s\n' "$*"; }
step() { # name, command...
  local name=$1; shift
  log "$name"
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$name"); echo "FAILED: $name"; fi
}
# The tests a meson run recorded as failed: its JSON log, one name a line.
# meson names the log <logbase>.json, or <logbase>-<wrapper's basename>.json
# when the run has a --wrapper. A log that cannot be read is said, not
# taken for "nothing failed".
failed_tests() { # build dir, log base, wrapper or ""
  local file=$1/meson-logs/$2${3:+-$(basename "$3")}.json
  python3 - "$file" <<'PY'
import json, sys
try:
    lines = open(sys.argv[1]).read().splitlines()
except OSError as e:
    print(f"failed_tests: cannot read {sys.argv[1]}: {e.strerror}", file=sys.stderr)
    sys.exit(0)
for line in lines:
    t = json.loads(line)
    if t.get("result") not in ("OK", "SKIP", "EXPECTEDFAIL"):
        # "project:suite / name" where the test has suites
        print(t["name"].split(" / ")[-1])
PY
}
# A meson step: run the tests; a test that fails is run once more, alone.
# One that passes then counts as passed but is named as flaky in the
# summary (a flake is a bug to fix, not to hide); one that fails again
# fails the step, and the summary names it.
meson_step() { # name, build dir, log base, meson test arguments...
  local name=$1 dir=$2 base=$3 t again=() wrapper="" a prev=""
  shift 3
  for a in "$@"; do [ "$prev" = --wrapper ] && wrapper=$a; prev=$a; done
  log "$name"
  if meson test -C "$dir" --logbase "$base" "$@"; then passed=$((passed + 1)); return; fi
  mapfile -t again < <(failed_tests "$dir" "$base" "$wrapper")
  if [ ${#again[@]} -eq 0 ]; then
    failed=$((failed + 1)); failures+=("$name"); echo "FAILED: $name"; return
  fi
  log "$name: running again, alone: ${again[*]}"
  if meson test -C "$dir" --logbase "$base-again" "$@" --num-processes 1 "${again[@]}"; then
    passed=$((passed + 1))
    for t in "${again[@]}"; do flaky+=("$name: $t"); done
    return
  fi
  failed=$((failed + 1))
  for t in $(failed_tests "$dir" "$base-again" "$wrapper"); do failures+=("$name: $t"); done
  echo "FAILED: $name"
}

# The unprivileged pass needs the tree readable by nobody: work on a copy
# under a world-traversable directory when the checkout is not.
if [ "$(id -u)" = 0 ] && ! setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$src/meson.build" 2>/dev/null; then
  work=$(mktemp -d /tmp/corral-test.XXXXXX)
  chmod 755 "$work"
  (cd "$src" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$work" 2>/dev/null || cp -a "$src/." "$work/")
  chmod -R a+rX "$work"
  src=$work
fi
cd "$src"
build=build-test
asan=build-asan

# Always a fresh build tree: a stale one could hide a missing dependency.
rm -rf "$build" "$asan"
step "configure (-Werror)" meson setup "$build" --werror -Dtests=enabled
step "build" ninja -C "$build"
step "README example (scripts/demo.sh)" env CORRAL="$src/$build/corral" bash scripts/demo.sh
meson_step "all suites" "$build" all --print-errorlogs --num-processes 2
if [ "$(id -u)" = 0 ]; then
  chmod -R a+rX "$build"
  suites=()
  for s in kernel integration escape; do
    meson test -C "$build" --list --suite "$s" >/dev/null 2>&1 && [ -n "$(meson test -C "$build" --list --suite "$s" 2>/dev/null)" ] && suites+=(--suite "$s")
  done
  if [ ${#suites[@]} -gt 0 ]; then
    # One test at a time: unprivileged, --procs is counted against every
    # process of uid nobody on the host (RLIMIT_NPROC), so parallel tests
    # as nobody would eat each other's budget.
    meson_step "security suites as nobody" "$build" nobody --print-errorlogs --num-processes 1 \
      --wrapper "$src/tests/as-nobody.sh" "${suites[@]}"
  fi
fi

step "configure ASan+UBSan" env CC=clang meson setup "$asan" -Dtests=enabled -Db_sanitize=address,undefined -Db_lundef=false -Dfuzz=true
step "build ASan+UBSan" ninja -C "$asan"
# unit and kernel suites under the sanitizers. The black-box suites are
# left out here: they run the sanitized corral with RLIMIT_AS applied in
# the child before execve, and ASan's shadow mappings cannot live under it.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  meson_step "unit and kernel suites under ASan+UBSan" "$asan" sanitized --print-errorlogs --suite unit --suite kernel
# The parsers of untrusted input, each fuzzed for a share of
# $CORRAL_FUZZ_SECONDS: the policy parser half, the mediation's decoder,
# the session request parser, the session's shell-state decoder, the MCP
# translation and the egress proxy's request parser a tenth each. A fuzzer the
# sanitizer build did not make is a failure, not a skip.
fuzz() { # name, binary, corpus folder, seconds, extra libFuzzer flags...
  local name=$1 bin=$asan/tests/fuzz/$2 seeds=$3 secs=$4 corpus
  shift 4
  [ "$secs" -gt 0 ] || return 0
  if [ ! -x "$bin" ]; then
    step "fuzz $name" sh -c "echo 'fuzz: $bin was not built' >&2; exit 1"
    return
  fi
  corpus=$(mktemp -d)
  cp "$seeds"/* "$corpus"/
  step "fuzz $name ${secs}s" env ASAN_OPTIONS=detect_leaks=1 \
    "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$corpus/" "$@" "$corpus"
}
share=$((fuzz_seconds / 10))
fuzz "policy parser" fuzz-policy tests/fuzz/corpus $((fuzz_seconds - 5 * share))
fuzz "mediation decoder" fuzz-unotify-decode tests/fuzz/corpus-unotify "$share"
fuzz "session request parser" fuzz-session tests/fuzz/corpus-session "$share" -max_len=65536
fuzz "session shell-state decoder" fuzz-session-state tests/fuzz/corpus-state "$share" -max_len=65536
fuzz "MCP translation" fuzz-mcp tests/fuzz/corpus-mcp "$share" -max_len=65536
fuzz "egress proxy request parser" fuzz-egress-request tests/fuzz/corpus-egress "$share"
step "bench smoke" bash bench/run.sh --smoke --build "$build"

echo
for f in "${flaky[@]}"; do echo "FLAKY (failed, then passed alone): $f"; done
for f in "${failures[@]}"; do echo "FAILED: $f"; done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
