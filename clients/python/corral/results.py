# SPDX-License-Identifier: LGPL-2.1-or-later
"""Typed results of the session's tools.

Each dataclass mirrors the fields of one tool's ``result`` event
(docs/sessions.md); field names are the protocol's. The whole event is
kept in ``raw``, so a field a newer corral adds is still at hand.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Type, TypeVar, Union

CallId = Union[int, str]
T = TypeVar("T")

_EVENT_KEYS = ("id", "event")


def _build(cls: Type[T], ev: Dict[str, Any], **nested: Any) -> T:
    """An instance of dataclass |cls| from the event |ev|: known fields
    taken (missing ones keep their defaults), the rest left in ``raw``."""
    kw: Dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name == "raw":
            kw["raw"] = ev
        elif f.name in nested:
            kw[f.name] = nested[f.name]
        elif f.name in ev:
            kw[f.name] = ev[f.name]
    return cls(**kw)


@dataclass
class Denial:
    """Something the sandbox policy refused during a command, with a hint
    naming the option or policy key that would allow it."""
    kind: str = ""
    what: str = ""
    count: int = 0
    source: str = ""
    hint: str = ""

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Denial":
        return _build(cls, d)


@dataclass
class RunResult:
    """The outcome of ``bash``, ``exec`` or ``job_kill``: the run result of
    ``corral run --json`` (plus ``cwd`` for ``bash``, ``job`` for
    ``job_kill``).

    ``exit_status`` is None when the command did not exit on its own
    (``signal`` then says which signal ended it); ``ended_by`` is one of
    ``exit``, ``signal``, ``timeout``, ``cpu``, ``file_size``,
    ``cancelled``. ``stdout_truncated``/``stderr_truncated`` say the
    output was clipped to ``max_output`` (head and tail kept);
    ``stdout_bytes``/``stderr_bytes`` count what the command wrote.
    """
    id: Optional[CallId] = None
    exit_status: Optional[int] = None
    signal: Optional[int] = None
    timed_out: bool = False
    ended_by: str = "exit"
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    wall_ms: float = 0.0
    cpu_ms: float = 0.0
    max_rss_kb: int = 0
    provider: str = "local"
    leftovers_killed: int = 0
    denials: List[Denial] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    cwd: Optional[str] = None
    job: Optional[CallId] = None
    run_id: str = ""
    started_at: str = ""
    tag: Any = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def ok(self) -> bool:
        """True when the command exited with status 0."""
        return self.exit_status == 0

    @classmethod
    def from_json(cls, ev: Dict[str, Any]) -> "RunResult":
        return _build(cls, ev, denials=[Denial.from_json(d) for d in ev.get("denials") or []])


@dataclass
class FileContent:
    """``read_file``: ``lines`` lines of ``path`` from the requested
    offset; ``truncated`` when more lines follow or the size cap cut it."""
    path: str = ""
    content: str = ""
    lines: int = 0
    truncated: bool = False
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, ev: Dict[str, Any]) -> "FileContent":
        return _build(cls, ev)


@dataclass
class WriteResult:
    """``write_file``: ``bytes`` written to ``path`` (relative to the root)."""
    path: str = ""
    bytes: int = 0
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, ev: Dict[str, Any]) -> "WriteResult":
        return _build(cls, ev)


@dataclass
class EditResult:
    """``edit_file``: how many ``replacements`` were made in ``path``."""
    path: str = ""
    replacements: int = 0
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, ev: Dict[str, Any]) -> "EditResult":
        return _build(cls, ev)


@dataclass
class DirEntry:
    """One entry of ``list_dir``: ``type`` is ``file``, ``dir``,
    ``symlink`` or ``other``; ``name`` is relative to the listed path."""
    name: str = ""
    type: str = ""
    size: int = 0

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "DirEntry":
        return _build(cls, d)


@dataclass
class DirListing:
    """``list_dir``: the ``entries`` under ``path``."""
    path: str = ""
    entries: List[DirEntry] = field(default_factory=list)
    truncated: bool = False
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, ev: Dict[str, Any]) -> "DirListing":
        return _build(cls, ev, entries=[DirEntry.from_json(e) for e in ev.get("entries") or []])


@dataclass
class GrepMatch:
    """One ``grep`` match: ``path`` relative to the root, ``line`` 1-based."""
    path: str = ""
    line: int = 0
    text: str = ""

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "GrepMatch":
        return _build(cls, d)


@dataclass
class GrepResult:
    """``grep``: the ``matches``; ``truncated`` when a cap stopped the search."""
    matches: List[GrepMatch] = field(default_factory=list)
    truncated: bool = False
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, ev: Dict[str, Any]) -> "GrepResult":
        return _build(cls, ev, matches=[GrepMatch.from_json(m) for m in ev.get("matches") or []])


@dataclass
class JobOutput:
    """``job_output``: a background job's output new since the last read."""
    job: Optional[CallId] = None
    stdout: str = ""
    stderr: str = ""
    running: bool = False
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, ev: Dict[str, Any]) -> "JobOutput":
        return _build(cls, ev)


@dataclass
class Status:
    """``status``: the session's directory (relative to the root), the
    ids of the calls running and of the background jobs, counters."""
    cwd: str = "."
    running: List[CallId] = field(default_factory=list)
    jobs: List[CallId] = field(default_factory=list)
    calls: int = 0
    errors: int = 0
    session_id: str = ""
    root: str = ""
    template_pid: int = 0
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, ev: Dict[str, Any]) -> "Status":
        return _build(cls, ev)


@dataclass
class CancelResult:
    """``cancel``: ``cancelled`` is True if the target was running."""
    cancelled: bool = False
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, ev: Dict[str, Any]) -> "CancelResult":
        return _build(cls, ev)


RESULT_TYPES: Dict[str, Any] = {
    "bash": RunResult,
    "exec": RunResult,
    "job_kill": RunResult,
    "read_file": FileContent,
    "write_file": WriteResult,
    "edit_file": EditResult,
    "list_dir": DirListing,
    "grep": GrepResult,
    "job_output": JobOutput,
    "status": Status,
    "cancel": CancelResult,
}


class CorralError(Exception):
    """A call the session refused or a tool that failed: ``code`` is the
    protocol's (``escape``, ``refused``, ``not_found``, ``ambiguous``,
    ``bad_request``, ``unknown_tool``, ``duplicate_id``, ``busy``,
    ``denied``, ``setup``, ``too_large``, ``internal``, ...), ``message``
    says what happened and what to change. The client adds ``closed``
    (the session ended) and ``timeout`` (no answer within the caller's
    wait)."""

    def __init__(self, code: str, message: str, id: Optional[CallId] = None, tool: Optional[str] = None):
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message
        self.id = id
        self.tool = tool


class SessionClosed(CorralError):
    """The session ended (``close()``, or ``corral session`` exited) before
    the call had its answer; ``message`` includes corral's last stderr."""

    def __init__(self, message: str, id: Optional[CallId] = None, tool: Optional[str] = None):
        super().__init__("closed", message, id, tool)


class CallTimeout(CorralError, TimeoutError):
    """No answer within the time the caller waited (``Call.result(timeout)``);
    the call may still be running: ``Call.cancel()`` ends it."""

    def __init__(self, message: str, id: Optional[CallId] = None, tool: Optional[str] = None):
        super().__init__("timeout", message, id, tool)
