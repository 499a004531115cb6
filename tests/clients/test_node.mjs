// SPDX-License-Identifier: LGPL-2.1-or-later
// The Node client (clients/node) against the real built corral: every tool,
// an escape and a write outside the root (each with its allowed twin), a
// deadline, AbortSignal cancellation, 8 overlapping calls, shell state,
// streaming, close() leaving no process, bad arguments, and `npm install`
// of the packed client into a temp dir. Runs as root and, through
// tests/as-nobody.sh, as nobody.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const SRCDIR = process.env.CORRAL_SRCDIR ?? path.join(here, '..', '..');
const CORRAL = path.resolve(process.env.CORRAL ?? path.join(SRCDIR, 'build', 'corral'));
const { Session, CorralError, Job } = await import(path.join(SRCDIR, 'clients', 'node', 'index.js'));

function makeRoot() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-nodeclient.'));
  fs.chmodSync(root, 0o755);
  if (process.geteuid() === 0) fs.chownSync(root, 65534, 65534); // the commands run as nobody
  return root;
}

function procTable() {
  const out = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let st;
    try { st = fs.readFileSync(`/proc/${d}/stat`, 'utf8'); } catch { continue; }
    const rest = st.slice(st.lastIndexOf(')') + 2).split(' ');
    out.set(Number(d), { ppid: Number(rest[1]), start: rest[19] });
  }
  return out;
}

function tree(pid) {
  const table = procTable();
  const out = new Map();
  const todo = [pid];
  while (todo.length) {
    const p = todo.pop();
    if (!table.has(p)) continue;
    out.set(p, table.get(p).start);
    for (const [q, v] of table) if (v.ppid === p) todo.push(q);
  }
  return out;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function withSession(fn, opts = {}) {
  const root = makeRoot();
  const s = await Session.start({ root, corral: CORRAL, ...opts });
  try { await fn(s, root); } finally { await s.close(); fs.rmSync(root, { recursive: true, force: true }); }
}

async function rejects(p, code, text) {
  await assert.rejects(p, (e) => {
    assert.ok(e instanceof CorralError, `not a CorralError: ${e}`);
    assert.equal(e.code, code, e.message);
    if (text) assert.ok(e.message.includes(text), e.message);
    return true;
  });
}

test('every tool', () => withSession(async (s, root) => {
  const st = await s.status();
  assert.equal(st.cwd, '.');
  assert.equal(fs.realpathSync(st.root), fs.realpathSync(root));
  assert.equal(s.sessionId, st.session_id);
  assert.deepEqual(await s.writeFile('src/a.txt', 'one\ntwo\nthree\ntwo\n').then((r) => [r.path, r.bytes]), ['src/a.txt', 18]);
  const r = await s.readFile('src/a.txt', { offset: 2, limit: 2 });
  assert.deepEqual([r.content, r.lines, r.truncated], ['two\nthree\n', 2, true]);
  await rejects(s.editFile('src/a.txt', 'two', '2'), 'ambiguous');
  await rejects(s.editFile('src/a.txt', 'four', '4'), 'not_found');
  assert.equal((await s.editFile('src/a.txt', 'two', '2', { all: true })).replacements, 2);
  assert.equal((await s.edit_file('src/a.txt', 'one', '1')).replacements, 1);
  assert.equal((await s.read_file('src/a.txt')).content, '1\n2\nthree\n2\n');
  const ls = await s.listDir(undefined, { depth: 2 });
  assert.ok(ls.entries.some((e) => e.name === 'src/a.txt' && e.type === 'file'), JSON.stringify(ls));
  const g = await s.grep('THREE', { glob: '*.txt', ignoreCase: true });
  assert.deepEqual(g.matches, [{ path: 'src/a.txt', line: 3, text: 'three' }]);
  const b = await s.bash('cd src && wc -l < a.txt && echo oops >&2; exit 3');
  assert.deepEqual([b.exit_status, b.ended_by, b.stdout.trim(), b.stderr, b.cwd], [3, 'exit', '4', 'oops\n', 'src']);
  assert.deepEqual(b.denials, []);
  assert.equal((await s.bash('tr a-z A-Z', { stdin: 'piped\n' })).stdout, 'PIPED\n');
  const clipped = await s.exec(['head', '-c', '100000', '/dev/zero'], { maxOutput: 1000 });
  assert.deepEqual([clipped.stdout_truncated, clipped.stdout_bytes], [true, 100000]);
  const e = await s.exec(['cat', 'a.txt']);
  assert.deepEqual([e.exit_status, e.stdout], [0, '1\n2\nthree\n2\n']);
  const job = await s.bashBackground('echo started; while sleep 0.05; do echo tick; done');
  assert.ok(job instanceof Job);
  assert.ok((await s.status()).jobs.includes(job.id));
  await sleep(300);
  const out = await job.output();
  assert.ok(out.running && out.stdout.startsWith('started\ntick\n'), JSON.stringify(out));
  const killed = await job.kill();
  assert.deepEqual([killed.ended_by, killed.job], ['cancelled', job.id]);
  assert.equal((await job.done).ended_by, 'cancelled');
  assert.equal(await s.cancel(job.id), false);
  const ej = await s.execBackground(['sleep', '30']);
  assert.equal(await s.cancel(ej), true);
  assert.equal((await ej.done).ended_by, 'cancelled');
  assert.deepEqual((await s.status()).running, []);
}));

test('an escape is an error the caller reads; inside works', () => withSession(async (s, root) => {
  await s.writeFile('ok.txt', 'x');
  assert.equal((await s.readFile('ok.txt')).content, 'x');
  await rejects(s.readFile('../../../etc/passwd'), 'escape', '../../../etc/passwd');
  await rejects(s.readFile('/etc/passwd'), 'escape', '/etc/passwd');
  const target = `/tmp/corral-nodeclient-escape-${process.pid}`;
  await rejects(s.writeFile(target, 'pwned'), 'escape');
  assert.ok(!fs.existsSync(target));
  fs.symlinkSync('/etc', path.join(root, 'etc-link'));
  await rejects(s.readFile('etc-link/passwd'), 'refused');
  const r = await s.bash(`echo pwned > ${target}`);
  assert.notEqual(r.exit_status, 0);
  assert.match(r.stderr, /ermission denied/);
  assert.ok(!fs.existsSync(target));
  for (const d of r.denials) assert.ok(d.hint, JSON.stringify(d));
  assert.equal((await s.bash('echo fine > inside.txt')).exit_status, 0);
  assert.equal(fs.readFileSync(path.join(root, 'inside.txt'), 'utf8'), 'fine\n');
}));

test('timeout and AbortSignal', () => withSession(async (s) => {
  let t = Date.now();
  const r = await s.bash('sleep 10', { timeout: 0.5 });
  assert.ok(Date.now() - t < 5000);
  assert.deepEqual([r.timed_out, r.ended_by, r.exit_status], [true, 'timeout', null]);
  const ac = new AbortController();
  t = Date.now();
  const p = s.bash('sleep 30', { signal: ac.signal });
  setTimeout(() => ac.abort(), 300);
  assert.equal((await p).ended_by, 'cancelled');
  assert.ok(Date.now() - t < 10000);
  await rejects(s.bash('true', { signal: AbortSignal.abort() }), 'aborted');
  const r2 = await s.bash('sleep 30', { signal: AbortSignal.timeout(300) });
  assert.equal(r2.ended_by, 'cancelled');
  assert.equal((await s.bash('echo next')).stdout, 'next\n');
}));

test('8 overlapping calls', () => withSession(async (s) => {
  const t = Date.now();
  const res = await Promise.all([...Array(8).keys()].map((i) => s.bash(`sleep 1; echo ${i}`)));
  const took = Date.now() - t;
  assert.deepEqual(res.map((r) => r.stdout), [...Array(8).keys()].map((i) => `${i}\n`));
  assert.ok(took < 6000, `8 calls of 1 s took ${took} ms: they did not overlap`);
  const mixed = await Promise.all([s.bash('echo a'), s.writeFile('f', 'x'), s.readFile('f').catch((e) => e.code), s.status()]);
  assert.equal(mixed[0].stdout, 'a\n');
  assert.equal(mixed[1].bytes, 1);
}));

test('shell state persists', () => withSession(async (s) => {
  await s.bash('mkdir -p a/b && cd a/b && export GREETING=hello && X=unexported');
  const r = await s.bash('echo $GREETING-${X:-none}');
  assert.deepEqual([r.cwd, r.stdout], ['a/b', 'hello-none\n']);
  assert.equal((await s.exec(['sh', '-c', 'echo $GREETING'])).stdout, 'hello\n');
  assert.equal((await s.bash('echo $ONCE', { env: { ONCE: '1' } })).stdout, '1\n');
  assert.equal((await s.bash('echo ${ONCE:-unset}')).stdout, 'unset\n');
  await s.bash('cd /; export GREETING=changed; sleep 5', { timeout: 0.3 });
  const r2 = await s.bash('echo $GREETING');
  assert.deepEqual([r2.stdout, r2.cwd], ['hello\n', 'a/b']);
}));

test('streaming', () => withSession(async (s) => {
  const got = [];
  const r = await s.bash('echo one; sleep 0.2; echo two >&2', { onOutput: (st, d) => got.push([st, d]) });
  assert.deepEqual(got, [['stdout', 'one\n'], ['stderr', 'two\n']]);
  assert.deepEqual([r.stdout, r.stderr], ['one\n', 'two\n']);
}));

test('bad arguments give a clear error', () => withSession(async (s, root) => {
  await rejects(s.bash(3), 'bad_request', '"command" must be a string');
  await assert.rejects(s.exec('ls -l'), TypeError);
  await rejects(s.listDir('.', { depth: -1 }), 'bad_request');
  await rejects(s.call('frobnicate'), 'unknown_tool', 'one of bash');
  await rejects(s.call('read_file', { path: 'x', bogus: 1 }), 'bad_request', 'unknown argument "bogus"');
  const long = s.bash('sleep 5', { id: 'dup' });
  await rejects(s.bash('true', { id: 'dup' }), 'duplicate_id');
  await s.cancel('dup');
  await long;
  await rejects(s.writeFile('big', 'x'.repeat(17 << 20)), 'too_large');
  assert.equal((await s.bash('echo alive')).stdout, 'alive\n');
  await rejects(Session.start({ root, corral: '/nonexistent/corral' }), 'setup', '/nonexistent/corral');
  await rejects(Session.start({ root, corral: CORRAL, options: ['--net', 'bogus'] }), 'setup', '--net');
  await rejects(Session.start({ root: path.join(root, 'missing'), corral: CORRAL }), 'setup');
  assert.throws(() => new Session({ root, corral: CORRAL, options: '--net loopback' }), TypeError);
}));

test('close() leaves no process behind', async () => {
  const root = makeRoot();
  try {
    const s = await Session.start({ root, corral: CORRAL });
    const job = await s.bashBackground('sleep 300 & setsid sleep 300 & wait');
    const running = s.bash('sleep 300', { id: 'long' });
    while (!(await s.status()).running.includes('long')) await sleep(20);
    await sleep(200);
    const procs = tree(s.pid);
    assert.ok(procs.size >= 6, `tree: ${[...procs.keys()]}`);
    assert.equal(await s.close(), 0);
    assert.equal((await running).ended_by, 'cancelled');
    assert.equal((await job.done).ended_by, 'cancelled');
    const table = procTable();
    const left = [...procs].filter(([p, start]) => table.get(p)?.start === start);
    assert.deepEqual(left, [], 'processes left after close()');
    await rejects(s.status(), 'closed');
    assert.deepEqual(fs.readdirSync(root), []);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a session killed under a call rejects it', async () => {
  const root = makeRoot();
  try {
    const s = await Session.start({ root, corral: CORRAL });
    const p = s.bash('sleep 300');
    await sleep(200);
    process.kill(s.pid, 'SIGKILL');
    await rejects(p, 'closed', 'exit status');
    await s.close();
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('npm install of the packed client, then import', async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-nodeclient-npm.'));
  const root = makeRoot();
  try {
    let npm;
    try { npm = execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim(); } catch { npm = null; }
    if (!npm) {
      if (process.env.CORRAL_MUST_WORK === '1') assert.fail('npm is not installed (scripts/install-deps.sh)');
      return;
    }
    const env = { ...process.env, HOME: tmp, npm_config_cache: path.join(tmp, 'cache'), npm_config_update_notifier: 'false' };
    const src = path.join(tmp, 'src');
    fs.cpSync(path.join(SRCDIR, 'clients', 'node'), src, { recursive: true });
    const tgz = execFileSync(npm, ['pack', '--silent', '--pack-destination', tmp], { cwd: src, env, encoding: 'utf8' }).trim().split('\n').pop();
    const app = path.join(tmp, 'app');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), '{"name": "app", "private": true, "type": "module"}');
    execFileSync(npm, ['install', '--offline', '--no-audit', '--no-fund', '--silent', path.join(tmp, tgz)], { cwd: app, env });
    assert.ok(fs.existsSync(path.join(app, 'node_modules', 'corral', 'index.d.ts')));
    fs.writeFileSync(path.join(app, 'main.js'), `import { Session } from 'corral';
const s = await Session.start({ root: process.argv[2], corral: process.argv[3] });
process.stdout.write((await s.bash('echo from-npm')).stdout);
await s.close();
`);
    const out = execFileSync(process.execPath, ['main.js', root, CORRAL], { cwd: app, env, encoding: 'utf8' });
    assert.equal(out, 'from-npm\n');
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.rmSync(root, { recursive: true, force: true });
  }
});
