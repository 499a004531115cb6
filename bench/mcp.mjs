// SPDX-License-Identifier: LGPL-2.1-or-later
// Latency of one `bash` tool call of `true`: through `corral mcp` from the
// official MCP TypeScript SDK client (Client + StdioClientTransport), and
// through `corral session` directly (one JSON line out, the result line
// back), both from this Node process, one call at a time, the two
// alternating.
// Usage: node bench/mcp.mjs [--corral build/corral] [--calls 200] [--root DIR]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const sdk = path.join(here, '..', 'tests', 'mcp', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm', 'client');
const { Client } = await import(pathToFileURL(path.join(sdk, 'index.js')));
const { StdioClientTransport } = await import(pathToFileURL(path.join(sdk, 'stdio.js')));

const arg = (name, def) => {
	const i = process.argv.indexOf('--' + name);
	return i > 0 ? process.argv[i + 1] : def;
};
const CORRAL = path.resolve(arg('corral', path.join(here, '..', 'build', 'corral')));
const N = Number(arg('calls', '200'));
let root = arg('root', null);
let base = null;
if (!root) {
	base = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-bench-mcp.'));
	root = path.join(base, 'root');
	fs.mkdirSync(root);
	fs.chmodSync(base, 0o755);
	if (process.getuid() === 0)
		fs.chownSync(root, 65534, 65534);
}

const stats = (xs) => {
	const s = [...xs].sort((a, b) => a - b);
	const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
	return { median: q(0.5), p10: q(0.1), p90: q(0.9), min: s[0] };
};
const ms = (t) => Number(t) / 1e6;

async function openMcp() {
	const client = new Client({ name: 'bench', version: '1' });
	await client.connect(new StdioClientTransport({ command: CORRAL, args: ['mcp', '--root', root], stderr: 'ignore' }));
	return {
		call: async () => {
			const r = await client.callTool({ name: 'bash', arguments: { command: 'true' } });
			if (r.isError || r.structuredContent.exit_status !== 0)
				throw new Error('bash true failed: ' + JSON.stringify(r));
		},
		close: () => client.close(),
	};
}

async function openSession() {
	const p = spawn(CORRAL, ['session', '--root', root], { stdio: ['pipe', 'pipe', 'ignore'] });
	let buf = '';
	let wake = null;
	let id = 0;
	p.stdout.on('data', (d) => {
		buf += d;
		if (wake)
			wake();
	});
	const next = async () => {
		for (;;) {
			const nl = buf.indexOf('\n');
			if (nl >= 0) {
				const line = buf.slice(0, nl);
				buf = buf.slice(nl + 1);
				return JSON.parse(line);
			}
			await new Promise((r) => { wake = r; });
		}
	};
	return {
		call: async () => {
			p.stdin.write(JSON.stringify({ id: id++, tool: 'bash', command: 'true' }) + '\n');
			const ev = await next();
			if (ev.event !== 'result' || ev.exit_status !== 0)
				throw new Error('bash true failed: ' + JSON.stringify(ev));
		},
		close: async () => {
			p.stdin.end();
			await new Promise((r) => p.on('exit', r));
		},
	};
}

// The two alternate call by call, so that other load on the machine hits both alike.
async function measure() {
	const sides = [await openSession(), await openMcp()];
	const xs = [[], []];
	for (let i = 0; i < N + 10; i++)
		for (let k = 0; k < 2; k++) {
			const t0 = process.hrtime.bigint();
			await sides[k].call();
			if (i >= 10) // the first calls warm up
				xs[k].push(ms(process.hrtime.bigint() - t0));
		}
	for (const s of sides)
		await s.close();
	return xs.map(stats);
}

const fmt = (s) => `median ${s.median.toFixed(2)} ms (p10 ${s.p10.toFixed(2)}, p90 ${s.p90.toFixed(2)}, min ${s.min.toFixed(2)})`;
try {
	const [a, b] = await measure();
	console.log(`bash "true", ${N} calls each, one at a time, the two alternating:`);
	console.log(`  corral session (JSON lines):      ${fmt(a)}`);
	console.log(`  corral mcp (SDK Client, stdio):    ${fmt(b)}`);
	console.log(`  MCP over the session, per call:   ${(b.median - a.median).toFixed(2)} ms`);
} finally {
	if (base)
		fs.rmSync(base, { recursive: true, force: true });
}
