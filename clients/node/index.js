// SPDX-License-Identifier: LGPL-2.1-or-later
// A client of `corral session` (docs/sessions.md): one confined shell and
// file toolset for an LLM agent's whole conversation. ESM, no dependencies.
//
//   import { Session } from 'corral';
//   const s = await Session.start({ root: '/path/to/project' });
//   const r = await s.bash('cd src && make');
//   console.log(r.exit_status, r.cwd, r.stdout);
//   await s.close();
//
// Results are the protocol's result events as plain objects (snake_case
// fields: exit_status, ended_by, denials, cwd, ...; index.d.ts types them).
// A refused call or failed tool rejects with a CorralError carrying the
// protocol's `code`.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { constants as osConstants } from 'node:os';

const LINE_MAX = 16 << 20; // the session's limit on one request line

/** A call the session refused or a tool that failed. */
export class CorralError extends Error {
  /**
   * @param {string} code the protocol's error code (escape, refused, not_found, ambiguous, bad_request, ...),
   *   or the client's: closed (the session ended), aborted (the signal was aborted before the call was sent)
   * @param {string} message what happened and what to change
   */
  constructor(code, message, id = null, tool = null) {
    super(`${code}: ${message}`);
    this.name = 'CorralError';
    this.code = code;
    this.detail = message;
    this.id = id;
    this.tool = tool;
  }
}

function clean(args) {
  const out = {};
  for (const [k, v] of Object.entries(args)) if (v !== undefined && v !== null) out[k] = v;
  return out;
}

/** A background `bash` or `exec` call. */
export class Job {
  constructor(session, id, done) {
    this.session = session;
    this.id = id;
    /** Resolves with the job's run result when it ends. */
    this.done = done;
    done.catch(() => {}); // a job nobody awaits must not be an unhandled rejection
  }
  /** Its stdout and stderr new since the last read, and whether it runs. */
  output() { return this.session.jobOutput(this.id); }
  /** Kill its whole process tree; resolves with its run result. */
  kill() { return this.session.jobKill(this.id); }
}

export class Session {
  /**
   * Start `corral session` and wait until it answers.
   * @param {object} [o]
   * @param {string} [o.root] the directory commands and file tools are confined to
   * @param {string} [o.policy] a JSON policy file
   * @param {string[]} [o.options] more `corral session` options, e.g. ['--net', 'loopback']
   * @param {string} [o.corral] the corral program (default 'corral')
   * @param {object} [o.env] the environment of corral (default: this process's)
   * @returns {Promise<Session>}
   */
  static async start(o = {}) {
    const s = new Session(o);
    try {
      const st = await s.status();
      s.sessionId = st.session_id;
      s.root = st.root;
    } catch (e) {
      await s.close();
      throw new CorralError('setup', `corral session did not start: ${s.stderrTail.trim() || e.detail || e.message}`);
    }
    return s;
  }

  constructor({ root, policy, options = [], corral = 'corral', env } = {}) {
    if (!Array.isArray(options)) throw new TypeError('options must be an array of command-line words, e.g. [\'--net\', \'loopback\']');
    this.argv = [corral, 'session', ...(root != null ? ['--root', String(root)] : []),
      ...(policy != null ? ['--policy', String(policy)] : []), ...options];
    this.pending = new Map();
    this.nextId = 1;
    this.closed = false;
    this.stderrTail = '';
    /** Errors the session sent with a null id (a request it could not read). */
    this.unattributedErrors = [];
    this.proc = spawn(this.argv[0], this.argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'], env: env ?? process.env });
    this.pid = this.proc.pid;
    this.exited = new Promise((resolve) => {
      this.proc.on('close', (code, sig) => { this.exitCode = code ?? 128 + (osConstants.signals[sig] ?? 0); this.failPending(); resolve(this.exitCode); });
    });
    this.proc.on('error', (e) => { this.stderrTail += `cannot run ${this.argv[0]}: ${e.message} (pass corral: '/path/to/corral')`; this.failPending(); });
    this.proc.stdin.on('error', () => {});
    this.proc.stderr.setEncoding('utf8');
    this.proc.stderr.on('data', (d) => { this.stderrTail = (this.stderrTail + d).slice(-8192); });
    createInterface({ input: this.proc.stdout, crlfDelay: Infinity }).on('line', (l) => this.dispatch(l));
  }

  dispatch(line) {
    let ev;
    try { ev = JSON.parse(line); } catch { return; }
    if (!ev || typeof ev !== 'object') return;
    if (ev.event === 'error' && ev.id == null) {
      this.unattributedErrors.push(new CorralError(ev.error?.code ?? 'internal', ev.error?.message ?? ''));
      return;
    }
    const c = this.pending.get(ev.id);
    if (!c) return;
    if (ev.event === 'output') {
      try { c.onOutput?.(ev.stream, ev.data); } catch { /* a caller's callback must not stop the reader */ }
    } else if (ev.event === 'started') {
      c.started?.();
    } else if (ev.event === 'result' || ev.event === 'error') {
      this.pending.delete(ev.id);
      c.cleanup();
      if (ev.event === 'result') c.resolve(ev);
      else c.reject(new CorralError(ev.error?.code ?? 'internal', ev.error?.message ?? '', ev.id, c.tool));
    }
  }

  failPending() {
    this.closed = true;
    const why = `corral session ended${this.exitCode != null ? ` (exit status ${this.exitCode})` : ''}`;
    for (const [id, c] of this.pending) {
      c.cleanup();
      c.reject(new CorralError('closed', `${why} before answering${this.stderrTail ? ': ' + this.stderrTail.trim() : ''}`, id, c.tool));
    }
    this.pending.clear();
  }

  /**
   * Send one request; resolves with its result event, rejects with a CorralError.
   * Arguments that are undefined or null are left out.
   * @param {string} tool
   * @param {object} [args] the tool's arguments
   * @param {object} [o]
   * @param {AbortSignal} [o.signal] aborting it cancels the call (its tree is killed; a command's result then
   *   says ended_by "cancelled")
   * @param {(stream: string, data: string) => void} [o.onOutput] stream the output (sets "stream": true)
   * @param {string|number} [o.id] the request's id (default a fresh integer)
   * @param {*} [o.tag] echoed in its events and audit line
   * @param {(id) => void} [o.onStarted] called when a background call started
   */
  call(tool, args = {}, { signal, onOutput, id, tag, onStarted } = {}) {
    if (this.closed) return Promise.reject(new CorralError('closed', 'the session is closed', id ?? null, tool));
    if (signal?.aborted) return Promise.reject(new CorralError('aborted', `${tool}: the signal was aborted before the call was sent`, id ?? null, tool));
    if (id == null) id = this.#freshId();
    else if (this.pending.has(id)) return Promise.reject(new CorralError('duplicate_id', `id ${JSON.stringify(id)} is still running: pick another`, id, tool));
    const req = { id, tool, ...clean(args) };
    if (tag != null) req.tag = tag;
    if (onOutput) req.stream = true;
    const line = JSON.stringify(req) + '\n';
    if (Buffer.byteLength(line) > LINE_MAX) {
      return Promise.reject(new CorralError('too_large', `${tool}: request of ${Buffer.byteLength(line)} bytes, the session reads at most ${LINE_MAX} per line (write large files in parts, or from a command)`, id, tool));
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => { this.call('cancel', { target: id }).catch(() => {}); };
      const c = { tool, resolve, reject, onOutput, started: onStarted && (() => onStarted(id)),
        cleanup: () => signal?.removeEventListener('abort', onAbort) };
      this.pending.set(id, c);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.proc.stdin.write(line);
    });
  }

  static #argv(argv) {
    if (!Array.isArray(argv) || !argv.every((a) => typeof a === 'string')) {
      throw new TypeError('exec: argv must be an array of strings, e.g. [\'ls\', \'-l\'] (bash() takes a string)');
    }
    return argv;
  }

  static #runArgs(o) {
    return { timeout: o.timeout, stdin: o.stdin, env: o.env, max_output: o.max_output ?? o.maxOutput };
  }

  /**
   * Run a bash script in the session's shell state (directory and exported variables carry over).
   * A failing command resolves (exit_status), it does not reject.
   * @param {string} command
   * @param {object} [o] timeout (s: the tree is killed at the deadline), stdin, env, max_output,
   *   signal, onOutput, tag, id
   */
  bash(command, o = {}) { return this.call('bash', { command, ...Session.#runArgs(o) }, o); }

  /** Run a program with exact arguments (no shell); options as bash(). */
  exec(argv, o = {}) {
    try { Session.#argv(argv); } catch (e) { return Promise.reject(e); }
    return this.call('exec', { argv, ...Session.#runArgs(o) }, o);
  }

  async #background(tool, args, o) {
    let started;
    const startedP = new Promise((r) => { started = r; });
    const id = o.id ?? this.#freshId();
    const done = this.call(tool, { ...args, background: true }, { ...o, id, onStarted: () => started() });
    await Promise.race([startedP, done]); // an error event rejects here
    return new Job(this, id, done);
  }

  #freshId() {
    let id;
    do id = this.nextId++; while (this.pending.has(id));
    return id;
  }

  /** Start a bash script in the background; resolves with its Job once it started. */
  bashBackground(command, o = {}) { return this.#background('bash', { command, ...Session.#runArgs(o) }, o); }

  /** exec() in the background; resolves with its Job. */
  execBackground(argv, o = {}) {
    try { Session.#argv(argv); } catch (e) { return Promise.reject(e); }
    return this.#background('exec', { argv, ...Session.#runArgs(o) }, o);
  }

  /** Read a text file under the root: {path, content, lines, truncated}. An escape rejects with code "escape". */
  readFile(path, { offset, limit, signal } = {}) { return this.call('read_file', { path, offset, limit }, { signal }); }
  /** Create or replace a file (parents created): {path, bytes}. */
  writeFile(path, content, { signal } = {}) { return this.call('write_file', { path, content }, { signal }); }
  /** Replace exact text once (or every occurrence with all: true): {path, replacements}. */
  editFile(path, old, new_, { all, signal } = {}) { return this.call('edit_file', { path, old, new: new_, all: all || undefined }, { signal }); }
  /** A directory's entries: {path, entries: [{name, type, size}], truncated}. */
  listDir(path, { depth, signal } = {}) { return this.call('list_dir', { path, depth }, { signal }); }
  /** POSIX extended regex over files: {matches: [{path, line, text}], truncated}. */
  grep(pattern, { path, glob, ignore_case, ignoreCase, signal } = {}) {
    return this.call('grep', { pattern, path, glob, ignore_case: ignore_case ?? ignoreCase }, { signal });
  }
  /** A background job's new output: {job, stdout, stderr, running}. */
  jobOutput(job) { return this.call('job_output', { job: job instanceof Job ? job.id : job }); }
  /** End a background job; its run result. */
  jobKill(job) { return this.call('job_kill', { job: job instanceof Job ? job.id : job }); }
  /** Cancel a running call by id; resolves true if it was running. */
  async cancel(target) { return (await this.call('cancel', { target: target instanceof Job ? target.id : target })).cancelled; }
  /** {cwd, running, jobs, calls, errors, session_id, root, template_pid}. */
  status() { return this.call('status'); }

  /**
   * End the session: close its stdin, so corral kills every call still running (their results still arrive),
   * every process of the session, and removes its tmp. Resolves with its exit status; SIGKILL after `timeout` ms.
   */
  async close(timeout = 30000) {
    this.closed = true;
    this.proc.stdin.end();
    let timer;
    const t = new Promise((r) => { timer = setTimeout(() => { this.proc.kill('SIGKILL'); r(); }, timeout); });
    await Promise.race([this.exited, t]);
    clearTimeout(timer);
    return this.exited;
  }

  async [Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose')]() { await this.close(); }
}

// the same names as the Python client, for those who prefer them
Session.prototype.read_file = Session.prototype.readFile;
Session.prototype.write_file = Session.prototype.writeFile;
Session.prototype.edit_file = Session.prototype.editFile;
Session.prototype.list_dir = Session.prototype.listDir;
Session.prototype.job_output = Session.prototype.jobOutput;
Session.prototype.job_kill = Session.prototype.jobKill;
