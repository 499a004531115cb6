// SPDX-License-Identifier: LGPL-2.1-or-later
// Latency of one `bash` call of `true` through clients/node against
// spawnSync('bash', ['-c', 'true']) from the same process, alternating.
// Prints JSON (medians, p10, p90 in ms); bench/clients.py prints the table.
// Usage: node bench/clients.mjs --corral build/corral --root DIR [--calls 200]
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const { Session } = await import(path.join(here, '..', 'clients', 'node', 'index.js'));
const arg = (name, def) => {
  const i = process.argv.indexOf('--' + name);
  return i > 0 ? process.argv[i + 1] : def;
};
const N = Number(arg('calls', '200'));
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  const m = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  return { median: m, p10: q(0.1), p90: q(0.9) };
};
const s = await Session.start({ root: arg('root', process.cwd()), corral: path.resolve(arg('corral', 'build/corral')) });
for (let i = 0; i < 20; i++) { await s.bash('true'); spawnSync('bash', ['-c', 'true']); }
const cl = [], ref = [];
for (let i = 0; i < N; i++) {
  let t = process.hrtime.bigint();
  await s.bash('true');
  cl.push(Number(process.hrtime.bigint() - t) / 1e6);
  t = process.hrtime.bigint();
  spawnSync('bash', ['-c', 'true']);
  ref.push(Number(process.hrtime.bigint() - t) / 1e6);
}
await s.close();
console.log(JSON.stringify({ client: stats(cl), ref: stats(ref) }));
