# SPDX-License-Identifier: LGPL-2.1-or-later
"""The ``Session`` class: one ``corral session`` child process.

Requests go to the child's stdin, one JSON line each; one reader thread
reads its stdout and hands each event to the call with the same id, so
any number of threads can have calls running at once.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import json
import os
import subprocess
import threading
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from .results import (RESULT_TYPES, CallId, CallTimeout, CorralError, DirListing, EditResult, FileContent,
                      GrepResult, JobOutput, RunResult, SessionClosed, Status, WriteResult)

OutputCallback = Callable[[str, str], None]
"""Called with (stream, data) for each piece of output of a streamed
call ("stdout" or "stderr", whole UTF-8 characters), from the reader
thread, before the call's result. It must return quickly and not wait
for a call's result (that result would come through the same thread)."""

LINE_MAX = 16 << 20  # the session's limit on one request line


class Call:
    """A request sent to the session; ``result()`` waits for its answer."""

    def __init__(self, session: "Session", id: CallId, tool: str, on_output: Optional[OutputCallback]):
        self.session = session
        self.id = id
        self.tool = tool
        self.on_output = on_output
        self._future: "concurrent.futures.Future[Any]" = concurrent.futures.Future()
        self._started = threading.Event()

    def done(self) -> bool:
        """True once the call has its result or error."""
        return self._future.done()

    def result(self, timeout: Optional[float] = None) -> Any:
        """The call's typed result. Raises ``CorralError`` if the session
        refused the call or the tool failed, ``CallTimeout`` if no answer
        came within ``timeout`` seconds (the call goes on: ``cancel()``
        ends it), ``SessionClosed`` if the session ended first."""
        if threading.current_thread() is self.session._reader and not self.done():
            raise RuntimeError("an on_output callback runs in the session's reader thread and must not wait for "
                               "a call (start it, or hand the work to another thread)")
        try:
            return self._future.result(timeout)
        except concurrent.futures.TimeoutError:
            raise CallTimeout("no answer to %s call %r within %.3g s; it may still be running (cancel it)"
                              % (self.tool, self.id, timeout), self.id, self.tool) from None

    def cancel(self) -> bool:
        """Ask the session to cancel this call (its whole process tree is
        killed; its result then says ``ended_by == "cancelled"``). True if
        it was running. Safe from any thread."""
        if self.done():
            return False
        return self.session.cancel(self.id)

    async def wait_async(self) -> Any:
        """``result()`` for asyncio. Cancelling the awaiting task cancels
        the call in the session too."""
        try:
            return await asyncio.shield(asyncio.wrap_future(self._future))
        except asyncio.CancelledError:
            if not self.done():
                try:
                    self.session.start("cancel", target=self.id)
                except CorralError:
                    pass
            raise


class Job:
    """A background ``bash`` or ``exec`` call: it runs while other calls go
    on. ``output()`` reads what it wrote since the last read, ``kill()``
    ends it, ``result()`` waits for its end."""

    def __init__(self, call: Call):
        self.call = call
        self.id = call.id

    def output(self) -> JobOutput:
        """Its stdout and stderr new since the last read, and whether it runs."""
        return self.call.session.job_output(self.id)

    def kill(self) -> RunResult:
        """Kill its whole process tree; its run result."""
        return self.call.session.job_kill(self.id)

    def result(self, timeout: Optional[float] = None) -> RunResult:
        """Wait for it to end (see ``Call.result``)."""
        return self.call.result(timeout)

    def running(self) -> bool:
        """True until its result arrived."""
        return not self.call.done()


class Session:
    """One warm sandbox for an agent's conversation, run by a ``corral
    session`` child process (docs/sessions.md).

    ``root`` is the directory the commands and file tools are confined to
    (default: corral's, the current directory), ``policy`` a JSON policy
    file, ``options`` more ``corral session`` options (``["--net",
    "loopback", "--timeout", "60"]``), ``corral`` the program to run.
    Raises ``CorralError`` (code ``setup``) with corral's message if the
    session cannot start.

    Use it as a context manager, or call ``close()``: ending the session
    kills whatever still runs in it and removes its private tmp.
    """

    def __init__(self, root: Optional[str] = None, policy: Optional[str] = None, options: Sequence[str] = (),
                 corral: str = "corral", env: Optional[Mapping[str, str]] = None, start_timeout: float = 30.0):
        if isinstance(options, str):
            raise TypeError("options must be a list of command-line words, e.g. [\"--net\", \"loopback\"]")
        argv = [corral, "session"]
        if root is not None:
            argv += ["--root", os.fspath(root)]
        if policy is not None:
            argv += ["--policy", os.fspath(policy)]
        argv += list(options)
        self.argv: List[str] = argv
        self._lock = threading.Lock()
        self._wlock = threading.Lock()
        self._pending: Dict[CallId, Call] = {}
        self._ids = itertools.count(1)
        self._closed = False
        self._stderr_tail = b""
        self.unattributed_errors: List[CorralError] = []
        """Errors the session sent with a null id (a request it could not read)."""
        try:
            self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, env=dict(env) if env is not None else None)
        except OSError as e:
            raise CorralError("setup", "cannot run %r: %s (pass corral=\"/path/to/corral\")" % (corral, e)) from None
        self._reader = threading.Thread(target=self._read_events, name="corral-session-reader", daemon=True)
        self._errreader = threading.Thread(target=self._read_stderr, name="corral-session-stderr", daemon=True)
        self._errreader.start()
        self._reader.start()
        try:
            st = self.start("status").result(start_timeout)
        except CorralError as e:
            self.close()
            self._errreader.join(1)
            raise CorralError("setup", "corral session did not start: %s" % (self._stderr_text() or e.message))
        self.session_id: str = st.session_id
        """The session's id (also in its audit lines)."""
        self.root: str = st.root
        """The confinement root, as corral resolved it."""

    # ---- plumbing ----

    @property
    def pid(self) -> int:
        """The process id of the ``corral session`` child."""
        return self._proc.pid

    def _stderr_text(self) -> str:
        return self._stderr_tail.decode("utf-8", "replace").strip()

    def _read_stderr(self) -> None:
        assert self._proc.stderr is not None
        for chunk in iter(lambda: self._proc.stderr.read1(65536), b""):  # type: ignore[union-attr]
            self._stderr_tail = (self._stderr_tail + chunk)[-8192:]

    def _read_events(self) -> None:
        assert self._proc.stdout is not None
        try:
            for line in self._proc.stdout:
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue
                if isinstance(ev, dict):
                    self._dispatch(ev)
        finally:
            self._fail_pending()

    def _dispatch(self, ev: Dict[str, Any]) -> None:
        kind = ev.get("event")
        id_ = ev.get("id")
        if kind == "error" and id_ is None:
            err = ev.get("error") or {}
            self.unattributed_errors.append(CorralError(err.get("code", "internal"), err.get("message", "")))
            return
        with self._lock:
            call = self._pending.get(id_)  # type: ignore[arg-type]
            if call is not None and kind in ("result", "error"):
                del self._pending[id_]  # type: ignore[arg-type]
        if call is None:
            return
        if kind == "output":
            if call.on_output is not None:
                try:
                    call.on_output(ev.get("stream", "stdout"), ev.get("data", ""))
                except Exception:  # a caller's callback must not stop the reader
                    pass
        elif kind == "started":
            call._started.set()
        elif kind == "result":
            cls = RESULT_TYPES.get(call.tool)
            try:
                res = cls.from_json(ev) if cls is not None else ev
            except Exception as e:  # a result this client cannot type: still deliver it
                res = CorralError("internal", "unreadable %s result: %s" % (call.tool, e), id_, call.tool)
            if isinstance(res, CorralError):
                call._future.set_exception(res)
            else:
                call._future.set_result(res)
            call._started.set()
        elif kind == "error":
            err = ev.get("error") or {}
            call._future.set_exception(CorralError(err.get("code", "internal"), err.get("message", ""),
                                                   id_, call.tool))
            call._started.set()

    def _fail_pending(self) -> None:
        if self._errreader.is_alive():
            self._errreader.join(2)  # corral's last words, for the message
        with self._lock:
            self._closed = True
            calls, self._pending = list(self._pending.values()), {}
        try:
            rc: Optional[int] = self._proc.wait(2)  # stdout's end comes just before the exit
        except subprocess.TimeoutExpired:
            rc = None
        why = "corral session ended" + ("" if rc is None else " (exit status %d)" % rc if rc >= 0 else
                                        " (exit status %d: killed by signal %d)" % (128 - rc, -rc))
        tail = self._stderr_text()
        for c in calls:
            if not c._future.done():
                c._future.set_exception(SessionClosed("%s before answering%s" % (why, ": " + tail if tail else ""),
                                                      c.id, c.tool))
            c._started.set()

    # ---- calls ----

    def start(self, tool: str, *, id: Optional[CallId] = None, tag: Any = None,
              on_output: Optional[OutputCallback] = None, **args: Any) -> Call:
        """Send one request and return at once; ``Call.result()`` waits
        for it. Arguments whose value is None are left out. With
        ``on_output``, the call streams (``"stream": true``). ``id``
        defaults to a fresh integer; ``tag`` is echoed in its events and
        audit line."""
        req: Dict[str, Any] = {"id": 0, "tool": tool}
        req.update((k, v) for k, v in args.items() if v is not None)
        if tag is not None:
            req["tag"] = tag
        if on_output is not None:
            req["stream"] = True
        with self._lock:
            if self._closed:
                raise SessionClosed("the session is closed", id, tool)
            if id is None:
                id = next(self._ids)
                while id in self._pending:
                    id = next(self._ids)
            elif id in self._pending:
                raise CorralError("duplicate_id", "id %r is still running: pick another" % (id,), id, tool)
            req["id"] = id
            try:
                line = json.dumps(req, ensure_ascii=False).encode("utf-8", "surrogateescape") + b"\n"
            except (TypeError, ValueError) as e:
                raise CorralError("bad_request", "%s: arguments are not JSON: %s" % (tool, e), id, tool) from None
            if len(line) > LINE_MAX:
                raise CorralError("too_large", "%s: request of %d bytes, the session reads at most %d per line "
                                  "(write large files in parts, or from a command)" % (tool, len(line), LINE_MAX),
                                  id, tool)
            call = Call(self, id, tool, on_output)
            self._pending[id] = call
        try:
            with self._wlock:
                assert self._proc.stdin is not None
                self._proc.stdin.write(line)
                self._proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            with self._lock:
                self._pending.pop(id, None)
            raise SessionClosed("corral session is not running%s" % (": " + self._stderr_text()
                                                                       if self._stderr_text() else ""), id, tool)
        return call

    def call(self, tool: str, **args: Any) -> Any:
        """``start(tool, **args).result()``: the typed result of any tool."""
        return self.start(tool, **args).result()

    async def acall(self, tool: str, **args: Any) -> Any:
        """``call()`` for asyncio; cancelling the task cancels the call."""
        return await self.start(tool, **args).wait_async()

    @staticmethod
    def _argv(argv: Sequence[str]) -> List[str]:
        if isinstance(argv, (str, bytes)) or not all(isinstance(a, str) for a in argv):
            raise TypeError("exec: argv must be a list of strings, e.g. [\"ls\", \"-l\"] (bash() takes a string)")
        return list(argv)

    def bash(self, command: str, *, timeout: Optional[float] = None, stdin: Optional[str] = None,
             env: Optional[Mapping[str, str]] = None, max_output: Optional[int] = None,
             on_output: Optional[OutputCallback] = None, tag: Any = None, id: Optional[CallId] = None) -> RunResult:
        """Run a bash script in the session's shell state: it starts in the
        directory and with the exported variables the last ``bash`` call
        that ended on its own left. ``timeout`` (seconds) kills the whole
        tree at the deadline (``timed_out``, ``ended_by == "timeout"``);
        ``env`` adds variables for this call; ``max_output`` caps each
        stream in bytes. A failing command is a result (``exit_status``),
        not an exception."""
        return self.start("bash", command=command, timeout=timeout, stdin=stdin, env=dict(env) if env else None,
                          max_output=max_output, on_output=on_output, tag=tag, id=id).result()

    def exec(self, argv: Sequence[str], *, timeout: Optional[float] = None, stdin: Optional[str] = None,
             env: Optional[Mapping[str, str]] = None, max_output: Optional[int] = None,
             on_output: Optional[OutputCallback] = None, tag: Any = None, id: Optional[CallId] = None) -> RunResult:
        """Run a program with exact arguments (no shell) in the session's
        directory and environment; options as ``bash()``."""
        return self.start("exec", argv=self._argv(argv), timeout=timeout, stdin=stdin,
                          env=dict(env) if env else None, max_output=max_output, on_output=on_output, tag=tag,
                          id=id).result()

    def _background(self, tool: str, id: Optional[CallId], on_output: Optional[OutputCallback], tag: Any,
                    **args: Any) -> Job:
        call = self.start(tool, background=True, id=id, on_output=on_output, tag=tag, **args)
        call._started.wait()
        if call.done() and call._future.exception() is not None:
            raise call._future.exception()  # type: ignore[misc]
        return Job(call)

    def bash_background(self, command: str, *, timeout: Optional[float] = None, stdin: Optional[str] = None,
                        env: Optional[Mapping[str, str]] = None, max_output: Optional[int] = None,
                        on_output: Optional[OutputCallback] = None, tag: Any = None,
                        id: Optional[CallId] = None) -> Job:
        """Start a bash script in the background (a dev server, a long
        build) once the session says it started; returns its ``Job``. It
        leaves no shell state."""
        return self._background("bash", id, on_output, tag, command=command, timeout=timeout, stdin=stdin,
                                env=dict(env) if env else None, max_output=max_output)

    def exec_background(self, argv: Sequence[str], *, timeout: Optional[float] = None, stdin: Optional[str] = None,
                        env: Optional[Mapping[str, str]] = None, max_output: Optional[int] = None,
                        on_output: Optional[OutputCallback] = None, tag: Any = None,
                        id: Optional[CallId] = None) -> Job:
        """``exec()`` in the background; returns its ``Job``."""
        return self._background("exec", id, on_output, tag, argv=self._argv(argv), timeout=timeout, stdin=stdin,
                                env=dict(env) if env else None, max_output=max_output)

    def read_file(self, path: str, *, offset: Optional[int] = None, limit: Optional[int] = None) -> FileContent:
        """Read a text file under the root, from line ``offset`` (1-based),
        at most ``limit`` lines (default 2000). A path leaving the root is
        ``CorralError`` code ``escape`` (``refused`` for a symlink)."""
        return self.start("read_file", path=path, offset=offset, limit=limit).result()

    def write_file(self, path: str, content: str) -> WriteResult:
        """Create or replace a file under the root (parent directories
        created)."""
        return self.start("write_file", path=path, content=content).result()

    def edit_file(self, path: str, old: str, new: str, *, all: bool = False) -> EditResult:
        """Replace the exact text ``old`` by ``new``: once (``old`` must
        occur exactly once: else code ``not_found`` or ``ambiguous``), or
        every occurrence with ``all=True``."""
        return self.start("edit_file", path=path, old=old, new=new, all=True if all else None).result()

    def list_dir(self, path: Optional[str] = None, *, depth: Optional[int] = None) -> DirListing:
        """A directory's entries (default: the session's directory),
        ``depth`` levels down (default 1)."""
        return self.start("list_dir", path=path, depth=depth).result()

    def grep(self, pattern: str, *, path: Optional[str] = None, glob: Optional[str] = None,
             ignore_case: Optional[bool] = None) -> GrepResult:
        """Search files for a POSIX extended regex; ``glob`` filters on the
        base name."""
        return self.start("grep", pattern=pattern, path=path, glob=glob, ignore_case=ignore_case).result()

    def job_output(self, job: Union[CallId, Job]) -> JobOutput:
        """A background job's output new since the last read."""
        return self.start("job_output", job=job.id if isinstance(job, Job) else job).result()

    def job_kill(self, job: Union[CallId, Job]) -> RunResult:
        """End a background job (its whole tree); its run result."""
        return self.start("job_kill", job=job.id if isinstance(job, Job) else job).result()

    def cancel(self, target: Union[CallId, Call, Job]) -> bool:
        """Cancel a running call by id (from any thread): its process tree
        is killed and its result says ``ended_by == "cancelled"``. True if
        it was running."""
        if isinstance(target, (Call, Job)):
            target = target.id
        return bool(self.start("cancel", target=target).result().cancelled)

    def status(self) -> Status:
        """The session's directory, running calls and jobs, counters."""
        return self.start("status").result()

    # ---- the end ----

    def close(self, timeout: float = 30.0) -> Optional[int]:
        """End the session: close its stdin, so corral kills every call
        still running (their results still arrive), kills every process
        of the session and removes its tmp; wait for it to exit (SIGKILL
        after ``timeout`` seconds). Returns its exit status. Idempotent."""
        with self._lock:
            self._closed = True
        with self._wlock:
            try:
                if self._proc.stdin is not None and not self._proc.stdin.closed:
                    self._proc.stdin.close()
            except OSError:
                pass
        try:
            rc = self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            rc = self._proc.wait()
        if threading.current_thread() is not self._reader:
            self._reader.join()
        self._errreader.join(5)
        for f in (self._proc.stdout, self._proc.stderr):
            if f is not None:
                f.close()
        return rc

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
