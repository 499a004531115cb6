#!/bin/sh
# meson test --wrapper: run one test as the unprivileged user nobody
# (uid/gid 65534, no supplementary groups, no capabilities). Used by
# scripts/test.sh for the security suites' unprivileged pass.
exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
	env CORRAL_UNPRIV=1 "$@"
