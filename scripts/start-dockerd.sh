#!/usr/bin/env bash
# Start a Docker daemon when none answers (CI and fresh machines).
set -euo pipefail
if docker info >/dev/null 2>&1; then exit 0; fi
command -v dockerd >/dev/null || { echo "start-dockerd: dockerd not installed" >&2; exit 1; }
log=${DOCKERD_LOG:-/tmp/dockerd.log}
nohup dockerd >"$log" 2>&1 &
for _ in $(seq 1 60); do
  docker info >/dev/null 2>&1 && exit 0
  sleep 0.5
done
echo "start-dockerd: dockerd did not answer within 30 s; see $log" >&2
tail -20 "$log" >&2
exit 1
