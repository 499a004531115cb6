#!/usr/bin/env bash
# Install everything corral's build, tests and benchmarks need on Debian 12.
# Run as root (or through sudo). Idempotent.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
pkgs=(
  build-essential meson ninja-build pkg-config clang
  libseccomp-dev libcap-ng-dev libjansson-dev libcmocka-dev
  util-linux iproute2 python3 python3-venv python3-setuptools python3-wheel git make gcc strace
  docker.io busybox-static bash-static
  bubblewrap firejail hyperfine gnuplot-nox
  linux-perf file
  musl-tools gperf cmake curl patch ca-certificates
  xz-utils sqlite3 golang-go default-jdk-headless
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# Node.js and npm (tests/workloads/node.sh; the MCP SDK client test,
# tests/mcp): Debian's, unless a node and npm are already there
# (NodeSource's nodejs bundles npm and conflicts with Debian's npm package).
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The static musl libseccomp and jansson that meson links the fast corral
# command line against (scripts/build-musl-deps.sh). Without them meson
# builds a static glibc corral instead: it works the same, and starts
# about 0.8 ms slower per run on a paravirtualized host.
if ! "$(dirname "$0")/build-musl-deps.sh"; then
  echo "install-deps: the musl libraries could not be built; corral will link glibc (slower start-up)" >&2
fi

# The official MCP TypeScript SDK client that tests/mcp/sdk-client.mjs drives
# `corral mcp` with, at the version tests/mcp/package-lock.json pins, into
# tests/mcp/node_modules (readable by nobody: the test also runs as nobody).
mcp_dir="$(cd "$(dirname "$0")/.." && pwd)/tests/mcp"
npm ci --prefix "$mcp_dir" --no-audit --no-fund --loglevel=error
chmod -R a+rX "$mcp_dir/node_modules"
