#!/usr/bin/env bash
# Node.js: `npm test` of a local package (node --test: fs under
# os.tmpdir(), child_process, timers, streams), npm install of a local
# dependency with no network, and worker_threads — which need
# --memory 2G: every V8 isolate reserves its own code range and heap, so
# the default 1G address-space limit stops the first worker
# ("Fatal process OOM in Failed to reserve virtual memory for CodeRange").
. "$(dirname "$0")/lib.sh"
need node nodejs
need npm
R=$(mkroot)
mkdir -p "$R/pkg/test" "$R/dep"
cat > "$R/dep/package.json" <<'J'
{"name": "dep", "version": "1.0.0", "main": "index.js"}
J
echo 'module.exports = (a, b) => a + b;' > "$R/dep/index.js"
cat > "$R/pkg/package.json" <<'J'
{"name": "pkg", "version": "1.0.0", "private": true,
 "scripts": {"test": "node --test test/"}}
J
cat > "$R/pkg/test/basic.test.js" <<'J'
const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs'), os = require('os'), path = require('path'), cp = require('child_process');
const zlib = require('zlib'), crypto = require('crypto');

test('tmpdir is TMPDIR and writable', () => {
  assert.strictEqual(os.tmpdir(), process.env.TMPDIR);
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'n-'));
  fs.writeFileSync(path.join(d, 'f'), 'x'.repeat(100000));
  fs.rmSync(d, {recursive: true});
});
test('child_process exec/spawnSync', () => {
  assert.strictEqual(cp.execSync('echo $((6*7))').toString(), '42\n');
  assert.strictEqual(cp.spawnSync(process.execPath, ['-e', 'process.exit(3)']).status, 3);
});
test('timers, streams, zlib, crypto', async () => {
  await new Promise(r => setTimeout(r, 20));
  const gz = zlib.gzipSync(Buffer.alloc(1 << 20));
  assert.strictEqual(zlib.gunzipSync(gz).length, 1 << 20);
  assert.strictEqual(crypto.createHash('sha256').update('x').digest('hex').length, 64);
  assert.ok(os.cpus().length > 0);
});
test('local dependency', () => {
  assert.strictEqual(require('dep')(2, 3), 5);
});
J
give "$R"
inside() { "$C" run --root "$R" --timeout 240 --cpu 240 "$@"; }

step "npm install ../dep (no network: --offline)" inside -- sh -c 'cd pkg && npm install --offline --no-audit --no-fund ../dep'
step "npm test (node --test)" inside -- sh -c 'cd pkg && npm test'
expect_eq "node -e in the default policy" "ok 4" "$(inside -- node -e 'console.log("ok", require("os").cpus().length > 0 ? 4 : 0)' 2>&1)"
expect_eq "worker_threads with --memory 2G" "42" "$(inside --memory 2G -- node -e '
const {Worker} = require("worker_threads");
new Worker("require(\"worker_threads\").parentPort.postMessage(42)", {eval: true}).on("message", m => console.log(m));' 2>&1)"
finish
