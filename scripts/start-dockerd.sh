#!/usr/bin/env bash
# Start a Docker daemon when none answers (CI and fresh machines); wait
# until it serves requests. Idempotent: exits 0 at once when one answers.
set -euo pipefail
if docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then exit 0; fi
command -v dockerd >/dev/null || { echo "start-dockerd: dockerd not installed (apt-get install docker.io)" >&2; exit 1; }
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || { echo "start-dockerd: no daemon answers and starting one needs root" >&2; exit 1; }
	exec sudo "$0" "$@"
fi
log=${DOCKERD_LOG:-/tmp/dockerd.log}
# A stale pid file from a daemon that died makes the next one refuse to start.
if [ -f /var/run/docker.pid ] && ! kill -0 "$(cat /var/run/docker.pid)" 2>/dev/null; then
	rm -f /var/run/docker.pid
fi
nohup dockerd >"$log" 2>&1 &
for _ in $(seq 1 120); do
	docker version --format '{{.Server.Version}}' >/dev/null 2>&1 && exit 0
	sleep 0.25
done
echo "start-dockerd: dockerd did not answer within 30 s; see $log" >&2
tail -20 "$log" >&2
exit 1
