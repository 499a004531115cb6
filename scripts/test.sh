#!/usr/bin/env bash
# The whole test suite: build with -Werror, run every suite as root (or as
# the invoking user), then the security suites again as the unprivileged
# user nobody, then an ASan+UBSan build of the unit suite, then the policy
# fuzzer for $CORRAL_FUZZ_SECONDS (default 60). Prints one closing line
# "N passed, N failed".
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
fuzz_seconds=${CORRAL_FUZZ_SECONDS:-60}
passed=0 failed=0
log() { printf '\n== %s\n' "$*"; }
step() { # name, command...
  local name=$1; shift
  log "$name"
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $name"; fi
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
step "all suites" meson test -C "$build" --print-errorlogs --num-processes 2
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
    step "security suites as nobody" meson test -C "$build" --print-errorlogs --num-processes 1 \
      --wrapper "$src/tests/as-nobody.sh" "${suites[@]}"
  fi
fi

step "configure ASan+UBSan" env CC=clang meson setup "$asan" -Dtests=enabled -Db_sanitize=address,undefined -Db_lundef=false -Dfuzz=true
step "build ASan+UBSan" ninja -C "$asan"
# unit and kernel suites under the sanitizers. The black-box suites are
# left out here: they run the sanitized corral with RLIMIT_AS applied in
# the child before execve, and ASan's shadow mappings cannot live under it.
step "unit and kernel suites under ASan+UBSan" env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  meson test -C "$asan" --print-errorlogs --suite unit --suite kernel
# The fuzz time is shared: two thirds to the policy parser, a third to the
# mediation's decoder.
unotify_seconds=$((fuzz_seconds / 3))
policy_seconds=$((fuzz_seconds - unotify_seconds))
if [ -x "$asan/tests/fuzz/fuzz-policy" ] && [ "$policy_seconds" -gt 0 ]; then
  corpus=$(mktemp -d)
  cp tests/fuzz/corpus/* "$corpus"/
  step "fuzz policy parser ${policy_seconds}s" env ASAN_OPTIONS=detect_leaks=1 \
    "$asan/tests/fuzz/fuzz-policy" -max_total_time="$policy_seconds" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$corpus/" "$corpus"
fi
if [ -x "$asan/tests/fuzz/fuzz-unotify-decode" ] && [ "$unotify_seconds" -gt 0 ]; then
  corpus=$(mktemp -d)
  cp tests/fuzz/corpus-unotify/* "$corpus"/
  step "fuzz mediation decoder ${unotify_seconds}s" env ASAN_OPTIONS=detect_leaks=1 \
    "$asan/tests/fuzz/fuzz-unotify-decode" -max_total_time="$unotify_seconds" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$corpus/" "$corpus"
fi
if [ -x "$asan/tests/fuzz/fuzz-session" ] && [ "$fuzz_seconds" -gt 0 ]; then
  corpus=$(mktemp -d)
  cp tests/fuzz/corpus-session/* "$corpus"/
  step "fuzz session request parser ${fuzz_seconds}s" env ASAN_OPTIONS=detect_leaks=1 \
    "$asan/tests/fuzz/fuzz-session" -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -artifact_prefix="$corpus/" "$corpus"
fi
if [ -x "$asan/tests/fuzz/fuzz-mcp" ] && [ "$fuzz_seconds" -gt 0 ]; then
  corpus=$(mktemp -d)
  cp tests/fuzz/corpus-mcp/* "$corpus"/
  step "fuzz MCP translation ${fuzz_seconds}s" env ASAN_OPTIONS=detect_leaks=1 \
    "$asan/tests/fuzz/fuzz-mcp" -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -artifact_prefix="$corpus/" "$corpus"
fi
step "bench smoke" bash bench/run.sh --smoke --build "$build"

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
