// SPDX-License-Identifier: LGPL-2.1-or-later
// `corral mcp` driven by the official MCP TypeScript SDK client
// (@modelcontextprotocol/sdk, Client + StdioClientTransport): tools listed
// with schemas, every tool called (the SDK validates each structuredContent
// against the tool's outputSchema), an escape, a timeout, a cancel whose
// process is gone afterwards, confinement inside (a write outside the root,
// a TCP and a Unix socket connection, each paired with the same thing done
// outside corral), and a clean exit 0 when the client closes. A raw part
// speaks JSON-RPC by hand: malformed JSON, unknown methods, version
// negotiation, stdout carrying protocol alone. Runs as root and as nobody
// (tests/as-nobody.sh). Skips (77) without node or the SDK unless
// CORRAL_MUST_WORK=1 (scripts/install-deps.sh installs it).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const CORRAL = process.env.CORRAL;
const MUST = process.env.CORRAL_MUST_WORK === '1';
const ROOT_USER = process.getuid() === 0;
let passes = 0;
const failures = [];

function check(name, cond, detail) {
	if (cond) {
		passes++;
		console.log('ok - ' + name);
	} else {
		failures.push(name);
		console.log('FAIL - ' + name + (detail === undefined ? '' : ' ' + JSON.stringify(detail).slice(0, 2000)));
	}
}

function skip(why) {
	if (MUST) {
		console.log('FAIL - cannot run under CORRAL_MUST_WORK=1: ' + why);
		process.exit(1);
	}
	console.log('SKIP: ' + why);
	process.exit(77);
}

let Client, StdioClientTransport;
try {
	({ Client } = await import('@modelcontextprotocol/sdk/client/index.js'));
	({ StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js'));
} catch (e) {
	skip('the MCP SDK is not installed in ' + path.join(here, 'node_modules') +
	     ' (scripts/install-deps.sh runs npm ci there): ' + e.message);
}
if (!CORRAL)
	skip('CORRAL (the built corral) is not set; run through meson test');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (r) => (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

function scratch() {
	const base = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-mcp.'));
	const root = path.join(base, 'root');
	const outside = path.join(base, 'outside');
	fs.mkdirSync(root);
	fs.mkdirSync(outside);
	fs.chmodSync(base, 0o755);
	if (ROOT_USER)
		for (const p of [base, root, outside])
			fs.chownSync(p, 65534, 65534);
	return { base, root, outside };
}

// Host processes whose command line contains |marker| (as nobody: our own, which the sandboxed ones are).
function procsWith(marker) {
	const out = [];
	for (const d of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(d))
			continue;
		try {
			const cl = fs.readFileSync('/proc/' + d + '/cmdline', 'latin1').replace(/\0/g, ' ');
			const st = fs.readFileSync('/proc/' + d + '/stat', 'latin1');
			if (cl.includes(marker) && st.split(') ')[1][0] !== 'Z')
				out.push(Number(d));
		} catch {
			// gone meanwhile
		}
	}
	return out;
}

async function waitFor(fn, ms) {
	const end = Date.now() + ms;
	for (;;) {
		const v = fn();
		if (v || Date.now() > end)
			return v;
		await sleep(25);
	}
}

async function sdkPart(root, outside) {
	const transport = new StdioClientTransport({ command: CORRAL, args: ['mcp', '--root', root], stderr: 'pipe' });
	let stderr = '';
	transport.stderr?.on('data', (d) => { stderr += d; });
	const client = new Client({ name: 'corral-test', version: '1.0.0' });
	await client.connect(transport);
	const proc = transport._process; // for the exit code at close (the SDK keeps it private)
	const exited = new Promise((resolve) => proc.once('exit', (code, sig) => resolve({ code, sig })));

	check('initialize: serverInfo names corral', client.getServerVersion()?.name === 'corral', client.getServerVersion());
	check('initialize: tools capability', !!client.getServerCapabilities()?.tools, client.getServerCapabilities());
	check('initialize: instructions for the model', /confined|sandbox/.test(client.getInstructions() || ''));
	await client.ping();
	check('ping answered', true);

	const { tools } = await client.listTools();
	const names = tools.map((t) => t.name).sort();
	const want = ['bash', 'edit_file', 'exec', 'grep', 'job_kill', 'job_output', 'list_dir', 'read_file', 'status',
		      'write_file'];
	check('tools/list names the session tools', JSON.stringify(names) === JSON.stringify(want), names);
	for (const t of tools)
		check('tool ' + t.name + ' has input and output schemas and a description',
		      t.inputSchema?.type === 'object' && t.outputSchema?.type === 'object' && t.description?.length > 20, t);

	// Every tool. The SDK client checks structuredContent against outputSchema and throws on a mismatch.
	const call = (name, args, opts) => client.callTool({ name, arguments: args }, undefined, opts);
	let r = await call('write_file', { path: 'src/a.txt', content: 'hello\nworld\n' });
	check('write_file', !r.isError && r.structuredContent.bytes === 12 && /wrote 12 bytes/.test(text(r)), r);
	check('write_file really wrote inside the root', fs.readFileSync(path.join(root, 'src/a.txt'), 'utf8') === 'hello\nworld\n');
	r = await call('read_file', { path: 'src/a.txt' });
	check('read_file: content as text and structured', !r.isError && text(r) === 'hello\nworld' &&
	      r.structuredContent.content === 'hello\nworld\n' && r.structuredContent.lines === 2, r);
	r = await call('edit_file', { path: 'src/a.txt', old: 'world', new: 'there' });
	check('edit_file', !r.isError && r.structuredContent.replacements === 1 &&
	      fs.readFileSync(path.join(root, 'src/a.txt'), 'utf8') === 'hello\nthere\n', r);
	r = await call('edit_file', { path: 'src/a.txt', old: 'absent', new: 'x' });
	check('edit_file of absent text is a tool error not_found', r.isError === true && /not_found/.test(text(r)), r);
	r = await call('list_dir', { path: 'src' });
	check('list_dir', !r.isError && r.structuredContent.entries.some((e) => e.name === 'a.txt' && e.type === 'file') &&
	      /a\.txt/.test(text(r)), r);
	r = await call('grep', { pattern: 'hel+o' });
	check('grep', !r.isError && r.structuredContent.matches.some((m) => m.path === 'src/a.txt' && m.line === 1) &&
	      /src\/a\.txt:1: hello/.test(text(r)), r);
	r = await call('bash', { command: 'cd src && export XV=42 && echo hi && echo err >&2' });
	check('bash: exit status, stdout, stderr, cwd in text and structured', !r.isError &&
	      r.structuredContent.exit_status === 0 && r.structuredContent.stdout === 'hi\n' &&
	      r.structuredContent.cwd === 'src' && /exit status 0/.test(text(r)) && /cwd: src/.test(text(r)) &&
	      /stderr:\nerr/.test(text(r)), r);
	r = await call('bash', { command: 'echo "$XV"; pwd; exit 3' });
	check('bash: state carries over; a non-zero exit is a result, not a tool error', !r.isError &&
	      r.structuredContent.exit_status === 3 && r.structuredContent.stdout === '42\n' + root + '/src\n' &&
	      /exit status 3/.test(text(r)), r);
	r = await call('exec', { argv: ['/bin/echo', 'via', 'exec'] });
	check('exec', !r.isError && r.structuredContent.stdout === 'via exec\n', r);
	r = await call('bash', { command: 'while :; do echo tick; sleep 0.05; done', background: true });
	const job = r.structuredContent?.job;
	check('bash background answers a job id', !r.isError && Number.isInteger(job) && /job_output/.test(text(r)), r);
	await sleep(300);
	r = await call('job_output', { job });
	check('job_output', !r.isError && r.structuredContent.running === true && /tick/.test(r.structuredContent.stdout), r);
	r = await call('status', {});
	check('status lists the job', !r.isError && r.structuredContent.cwd === 'src' &&
	      JSON.stringify(r.structuredContent.jobs).includes(String(job)), r);
	r = await call('job_kill', { job });
	check('job_kill', !r.isError && r.structuredContent.ended_by === 'cancelled', r);
	r = await call('bash', {});
	check('bad arguments are a tool error naming the argument', r.isError === true && /command/.test(text(r)) &&
	      /bad_request/.test(text(r)), r);
	let err = null;
	try {
		await call('frobnicate', {});
	} catch (e) {
		err = e;
	}
	check('an unknown tool is a protocol error -32602', err && err.code === -32602, String(err));

	// Escape, with its control: the same file is readable outside corral, and inside the root read_file works.
	r = await call('read_file', { path: '../../etc/passwd' });
	check('escape: read_file ../../etc/passwd is a tool error naming escape', r.isError === true &&
	      /escape/.test(text(r)) && /leaves the root/.test(text(r)) && !/root:x:0/.test(text(r)), r);
	check('escape control: /etc/passwd is readable outside corral', /root:/.test(fs.readFileSync('/etc/passwd', 'utf8')));
	r = await call('bash', { command: 'cat /etc/shadow; cat ' + path.join(outside, 'secret') });
	check('confinement: bash cannot read a file outside the root', !r.isError && r.structuredContent.exit_status !== 0 &&
	      !/SECRET/.test(r.structuredContent.stdout), r);
	check('confinement control: the same file is readable outside corral',
	      fs.readFileSync(path.join(outside, 'secret'), 'utf8') === 'SECRET\n');

	// Timeout.
	let t0 = Date.now();
	r = await call('bash', { command: 'sleep 30', timeout: 1 });
	check('timeout: sleep 30 with timeout 1 is killed at ~1 s', !r.isError && r.structuredContent.timed_out === true &&
	      r.structuredContent.ended_by === 'timeout' && Date.now() - t0 < 5000 && /timed out/.test(text(r)), r);

	// Cancel: the SDK sends notifications/cancelled when the signal aborts; the process must be gone.
	const marker = '37.' + String(process.pid).padStart(6, '0');
	const ac = new AbortController();
	t0 = Date.now();
	const pending = call('bash', { command: 'sleep ' + marker }, { signal: ac.signal, timeout: 60000 });
	const seen = await waitFor(() => procsWith('sleep ' + marker).length > 0, 5000);
	check('cancel control: the long command runs before the cancel', seen);
	ac.abort('test cancels');
	let aborted = false;
	try {
		await pending;
	} catch {
		aborted = true;
	}
	check('cancel: the SDK call rejects at once', aborted && Date.now() - t0 < 5000);
	const gone = await waitFor(() => procsWith('sleep ' + marker).length === 0, 3000);
	check('cancel: the server ended the cancelled process', gone, procsWith('sleep ' + marker));
	r = await call('status', {});
	check('cancel: the session goes on, the call no longer running', !r.isError &&
	      r.structuredContent.running.length === 0, r);

	// Sockets: a TCP and a Unix listener on the host, reachable outside corral (control), refused inside.
	const tcp = net.createServer((c) => { c.on('error', () => {}); c.end('hello\n'); });
	await new Promise((res) => tcp.listen(0, '127.0.0.1', res));
	const port = tcp.address().port;
	const sockPath = path.join(outside, 'host.sock');
	const unix = net.createServer((c) => { c.on('error', () => {}); c.end('hello\n'); });
	await new Promise((res) => unix.listen(sockPath, res));
	if (ROOT_USER)
		fs.chmodSync(sockPath, 0o777);
	const reach = (opts) => new Promise((res) => {
		const c = net.connect(opts, () => { c.destroy(); res(true); });
		c.on('error', () => res(false));
	});
	check('socket control: the TCP listener is reachable outside corral', await reach({ host: '127.0.0.1', port }));
	check('socket control: the Unix listener is reachable outside corral', await reach({ path: sockPath }));
	r = await call('bash', { command: `exec 3<>/dev/tcp/127.0.0.1/${port} && echo CONNECTED`, timeout: 10 });
	check('confinement: a TCP connection from inside is refused', !r.isError && r.structuredContent.exit_status !== 0 &&
	      !/CONNECTED/.test(r.structuredContent.stdout), r);
	check('confinement: the model reads why (the refusal or a denial in the text)',
	      /denied by the sandbox policy:\n- network|Permission denied|not permitted/.test(text(r)), r);
	const py = fs.existsSync('/usr/bin/python3');
	if (py) {
		r = await call('exec', { argv: ['/usr/bin/python3', '-c', `import socket; s = socket.socket(socket.AF_UNIX); ` +
					 `s.connect(${JSON.stringify(sockPath)}); print("CONNECTED")`], timeout: 20 });
		check('confinement: a Unix socket connection from inside is refused', !r.isError &&
		      r.structuredContent.exit_status !== 0 && !/CONNECTED/.test(r.structuredContent.stdout), r);
	}
	r = await call('bash', { command: 'echo x > ' + path.join(outside, 'planted') + '; echo ok > inside.txt' });
	check('confinement: bash writing outside the root fails', !fs.existsSync(path.join(outside, 'planted')), r);
	check('confinement control: the same bash wrote inside the root', fs.existsSync(path.join(root, 'src', 'inside.txt')), r);
	fs.writeFileSync(path.join(outside, 'control'), 'x');
	check('confinement control: writing there outside corral works', fs.existsSync(path.join(outside, 'control')));
	tcp.close();
	unix.close();

	// A long call left running when the client closes: the session kills it and exits 0.
	const marker2 = '41.' + String(process.pid).padStart(6, '0');
	const left = call('bash', { command: 'sleep ' + marker2 }, { timeout: 60000 }).catch(() => null);
	await waitFor(() => procsWith('sleep ' + marker2).length > 0, 5000);
	t0 = Date.now();
	await client.close();
	const ex = await exited;
	await left;
	check('close: corral mcp exits 0 when the client closes stdin', ex.code === 0 && Date.now() - t0 < 2000, ex);
	check('close: no process of the session is left', await waitFor(() => procsWith('sleep ' + marker2).length === 0, 2000));
	check('stderr carries the log', /serving/.test(stderr), stderr);
}

// JSON-RPC by hand: what the SDK never sends.
async function rawPart(root) {
	const p = spawn(CORRAL, ['mcp', '--root', root], { stdio: ['pipe', 'pipe', 'pipe'] });
	let out = '';
	const waiters = [];
	p.stdout.on('data', (d) => {
		out += d;
		for (const w of waiters.splice(0))
			w();
	});
	const lines = () => out.split('\n').filter((l) => l.length);
	const send = (o) => p.stdin.write((typeof o === 'string' ? o : JSON.stringify(o)) + '\n');
	const answer = async (id) => {
		const end = Date.now() + 10000;
		for (;;) {
			const m = lines().map((l) => JSON.parse(l)).find((m) => m.id === id && ('result' in m || 'error' in m));
			if (m || Date.now() > end)
				return m;
			await new Promise((r) => { waiters.push(r); setTimeout(r, 100); });
		}
	};
	const exited = new Promise((res) => p.on('exit', (code) => res(code)));

	send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {},
		clientInfo: { name: 'raw', version: '0' } } });
	let m = await answer(1);
	check('negotiation: a supported older revision is answered as asked', m?.result?.protocolVersion === '2024-11-05', m);
	send({ jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '1999-01-01', capabilities: {},
		clientInfo: { name: 'raw', version: '0' } } });
	m = await answer(2);
	check('negotiation: an unknown revision is answered with the latest', m?.result?.protocolVersion === '2025-11-25', m);
	send({ jsonrpc: '2.0', method: 'notifications/initialized' });
	send('{"jsonrpc": "2.0", "id": 3, "method": ');
	send({ jsonrpc: '2.0', id: 4, method: 'resources/list' });
	m = await answer(4);
	check('unknown method: -32601', m?.error?.code === -32601, m);
	const parseErr = lines().map((l) => JSON.parse(l)).find((x) => x.error?.code === -32700);
	check('malformed JSON: -32700 with id null', parseErr && parseErr.id === null, lines());
	send([{ jsonrpc: '2.0', id: 5, method: 'ping' }]);
	send({ jsonrpc: '2.0', id: 'six', method: 'ping' });
	m = await answer('six');
	check('ping with a string id', m && JSON.stringify(m.result) === '{}', m);
	check('a batch is an invalid request', lines().some((l) => JSON.parse(l).error?.code === -32600), lines());
	send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'bash', arguments: { command: 'sleep 30' } } });
	await sleep(200);
	send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'test' } });
	for (let i = 0; i < 30; i++) {
		send({ jsonrpc: '2.0', id: 100 + i, method: 'tools/call', params: { name: 'status', arguments: {} } });
		m = await answer(100 + i);
		if (m?.result?.structuredContent?.running?.length === 0)
			break;
		await sleep(100);
	}
	check('cancelled call no longer running', m?.result?.structuredContent?.running?.length === 0, m);
	await sleep(200);
	check('a cancelled request gets no response', !lines().some((l) => JSON.parse(l).id === 7), lines());
	send({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'read_file', arguments: 'x' } });
	m = await answer(9);
	check('arguments not an object: -32602', m?.error?.code === -32602, m);
	p.stdin.end();
	const code = await exited;
	check('raw: exit 0 at end of stdin', code === 0, code);
	check('stdout carries JSON-RPC 2.0 alone', lines().every((l) => JSON.parse(l).jsonrpc === '2.0'), lines());
}

const { base, root, outside } = scratch();
fs.writeFileSync(path.join(outside, 'secret'), 'SECRET\n');
try {
	await sdkPart(root, outside);
	await rawPart(root);
} catch (e) {
	check('no exception', false, String(e && e.stack || e));
} finally {
	fs.rmSync(base, { recursive: true, force: true });
}
console.log(`${passes} passed, ${failures.length} failed`);
if (failures.length) {
	console.log('failed: ' + failures.join(', '));
	process.exit(1);
}
process.exit(0);
