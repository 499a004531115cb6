#!/usr/bin/env bash
# A real C project's build and unit tests inside: corral itself, copied
# into a fresh root, configured with meson, built with ninja (parallel
# gcc, ar, the linker), then its unit tests that honour TMPDIR run.
# (tests/unit/test-policy.c and tests/docker/test-docker-plan.c mkdtemp
# under a literal /tmp, which the sandbox cannot write: they are left out
# here — see docs/workloads.md.)
. "$(dirname "$0")/lib.sh"
need meson
need ninja ninja-build
need gcc
[ -f "$SRCDIR/meson.build" ] || { echo "SKIP: no source tree at $SRCDIR"; exit 77; }
R=$(mkroot)
mkdir "$R/src"
# The working tree's files (no build directories), as a clone would give.
if git -C "$SRCDIR" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$SRCDIR" ls-files -z --cached --others --exclude-standard | (cd "$SRCDIR" && xargs -0 tar cf -) | tar xf - -C "$R/src"
else
	(cd "$SRCDIR" && tar cf - --exclude='./build*' .) | tar xf - -C "$R/src"
fi
give "$R"
inside() { "$C" run --root "$R/src" --timeout 600 --cpu 600 "$@"; }

step "meson setup" inside -- meson setup b
step "ninja (parallel build)" inside -- ninja -C b
step "unit tests that honour TMPDIR" inside -- meson test -C b --no-rebuild --print-errorlogs \
	policy-cli landlock-rights seccomp-bpf resolve
expect_eq "the built corral answers" "30" "$(inside -- sh -c 'b/corral policy show --root . | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)[\"timeout\"])"' 2>&1)"
finish
