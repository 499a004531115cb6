// SPDX-License-Identifier: LGPL-2.1-or-later
// Types of the `corral session` client (fields are the protocol's: docs/sessions.md).

export type CallId = string | number;

export interface Denial {
  kind: string;
  what: string;
  count: number;
  source: string;
  /** the option or policy key that would allow it */
  hint: string;
}

interface Event {
  id: CallId;
  event: 'result';
  tag?: unknown;
}

/** bash, exec, job_kill */
export interface RunResult extends Event {
  run_id: string;
  started_at: string;
  /** null when the command did not exit on its own (see signal, ended_by) */
  exit_status: number | null;
  signal: number | null;
  timed_out: boolean;
  ended_by: 'exit' | 'signal' | 'timeout' | 'cpu' | 'file_size' | 'cancelled' | string;
  stdout: string;
  stderr: string;
  stdout_truncated: boolean;
  stderr_truncated: boolean;
  stdout_bytes: number;
  stderr_bytes: number;
  wall_ms: number;
  cpu_ms: number;
  max_rss_kb: number;
  provider: string;
  leftovers_killed: number;
  denials: Denial[];
  warnings: string[];
  /** bash: where the shell ended, relative to the root */
  cwd?: string;
  /** job_kill: the job's id */
  job?: CallId;
}

export interface FileContent extends Event { path: string; content: string; lines: number; truncated: boolean }
export interface WriteResult extends Event { path: string; bytes: number }
export interface EditResult extends Event { path: string; replacements: number }
export interface DirEntry { name: string; type: 'file' | 'dir' | 'symlink' | 'other'; size: number }
export interface DirListing extends Event { path: string; entries: DirEntry[]; truncated: boolean }
export interface GrepMatch { path: string; line: number; text: string }
export interface GrepResult extends Event { matches: GrepMatch[]; truncated: boolean }
export interface JobOutput extends Event { job: CallId; stdout: string; stderr: string; running: boolean }
export interface Status extends Event {
  cwd: string;
  running: CallId[];
  jobs: CallId[];
  calls: number;
  errors: number;
  session_id: string;
  root: string;
  template_pid: number;
}

export class CorralError extends Error {
  /** escape, refused, not_found, ambiguous, bad_request, unknown_tool, duplicate_id, busy, denied, setup,
   * too_large, internal; the client's: closed, aborted */
  code: string;
  /** the session's message */
  detail: string;
  id: CallId | null;
  tool: string | null;
}

export interface CallOptions {
  /** aborting it cancels the call: its tree is killed; a command's result says ended_by "cancelled" */
  signal?: AbortSignal;
  /** streams the output ("stream": true), before the result */
  onOutput?: (stream: 'stdout' | 'stderr', data: string) => void;
  id?: CallId;
  tag?: unknown;
}

export interface RunOptions extends CallOptions {
  /** seconds; the whole tree is killed at the deadline (timed_out, ended_by "timeout") */
  timeout?: number;
  stdin?: string;
  env?: Record<string, string>;
  /** bytes per stream */
  max_output?: number;
  maxOutput?: number;
}

export interface StartOptions {
  root?: string;
  policy?: string;
  /** more `corral session` options, e.g. ['--net', 'loopback'] */
  options?: string[];
  /** the corral program (default 'corral') */
  corral?: string;
  /** the environment of corral (default: this process's) */
  env?: Record<string, string | undefined>;
}

export class Job {
  readonly id: CallId;
  /** resolves with the job's run result when it ends */
  readonly done: Promise<RunResult>;
  output(): Promise<JobOutput>;
  kill(): Promise<RunResult>;
}

export class Session {
  static start(o?: StartOptions): Promise<Session>;
  readonly pid: number;
  readonly sessionId: string;
  readonly root: string;
  readonly exited: Promise<number>;
  unattributedErrors: CorralError[];
  call(tool: string, args?: Record<string, unknown>, o?: CallOptions & { onStarted?: (id: CallId) => void }): Promise<any>;
  bash(command: string, o?: RunOptions): Promise<RunResult>;
  exec(argv: string[], o?: RunOptions): Promise<RunResult>;
  bashBackground(command: string, o?: RunOptions): Promise<Job>;
  execBackground(argv: string[], o?: RunOptions): Promise<Job>;
  readFile(path: string, o?: { offset?: number; limit?: number; signal?: AbortSignal }): Promise<FileContent>;
  writeFile(path: string, content: string, o?: { signal?: AbortSignal }): Promise<WriteResult>;
  editFile(path: string, old: string, replacement: string, o?: { all?: boolean; signal?: AbortSignal }): Promise<EditResult>;
  listDir(path?: string, o?: { depth?: number; signal?: AbortSignal }): Promise<DirListing>;
  grep(pattern: string, o?: { path?: string; glob?: string; ignore_case?: boolean; ignoreCase?: boolean; signal?: AbortSignal }): Promise<GrepResult>;
  jobOutput(job: CallId | Job): Promise<JobOutput>;
  jobKill(job: CallId | Job): Promise<RunResult>;
  cancel(target: CallId | Job): Promise<boolean>;
  status(): Promise<Status>;
  /** end of stdin: corral kills what still runs and removes the tmp; resolves with its exit status */
  close(timeout?: number): Promise<number>;
  read_file: Session['readFile'];
  write_file: Session['writeFile'];
  edit_file: Session['editFile'];
  list_dir: Session['listDir'];
  job_output: Session['jobOutput'];
  job_kill: Session['jobKill'];
}
