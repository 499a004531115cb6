# SPDX-License-Identifier: LGPL-2.1-or-later
"""A client of ``corral session``: one confined shell and file toolset for
an LLM agent's whole conversation (standard library only).

    from corral import Session
    with Session(root="/path/to/project") as s:
        r = s.bash("cd src && make")
        print(r.exit_status, r.cwd, r.stdout)

Every tool of the session protocol (docs/sessions.md) is a method of
``Session``; results are dataclasses (``corral.results``); a refused call
or failed tool raises ``CorralError`` with the protocol's ``code``.
"""
from .results import (CallTimeout, CancelResult, CorralError, Denial, DirEntry, DirListing, EditResult, FileContent,
                      GrepMatch, GrepResult, JobOutput, RunResult, SessionClosed, Status, WriteResult)
from .session import Call, Job, Session

__all__ = ["Session", "Call", "Job", "CorralError", "SessionClosed", "CallTimeout", "RunResult", "Denial",
           "FileContent", "WriteResult", "EditResult", "DirEntry", "DirListing", "GrepMatch", "GrepResult",
           "JobOutput", "Status", "CancelResult"]
__version__ = "0.1.0"
