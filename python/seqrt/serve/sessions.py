"""Decode sessions of one replica: each holds a seqrt.Stream.

A session's id starts with the id of the replica that holds it, so the
router sends its steps there (router.py) and a replica given a session it
does not hold can tell "its replica is gone" from "closed or expired".
"""

import threading
import time
import uuid
from typing import Callable, Dict, Tuple

from .codec import RequestError


class SessionGoneError(RequestError):
    """The session's replica no longer serves: restore from a snapshot."""

    status = 410


def owner_of(session_id: str) -> str:
    return session_id.split(".", 1)[0]


class SessionTable:
    """At most `limit` sessions; one idle past `idle_timeout_s` is closed
    the next time the table is used. Thread-safe."""

    def __init__(self, owner: str, limit: int, idle_timeout_s: float,
                 clock: Callable[[], float] = time.monotonic):
        if "." in owner:
            raise ValueError(f"replica id '{owner}' must not contain '.'")
        self.owner = owner
        self.limit = limit
        self.idle_timeout_s = idle_timeout_s
        self._clock = clock
        self._lock = threading.Lock()
        self._sessions: Dict[str, Tuple[object, float]] = {}

    def __len__(self):
        with self._lock:
            return len(self._sessions)

    def add(self, stream) -> str:
        with self._lock:
            self._expire()
            if len(self._sessions) >= self.limit:
                raise RequestError(
                    f"this replica holds its limit of {self.limit} sessions; "
                    f"close one or retry later", 429)
            session_id = f"{self.owner}.{uuid.uuid4().hex}"
            self._sessions[session_id] = (stream, self._clock())
            return session_id

    def get(self, session_id: str):
        """The session's stream; marks it used."""
        with self._lock:
            self._expire()
            entry = self._sessions.get(session_id)
            if entry is None:
                raise self._missing(session_id)
            self._sessions[session_id] = (entry[0], self._clock())
            return entry[0]

    def close(self, session_id: str) -> None:
        with self._lock:
            if self._sessions.pop(session_id, None) is None:
                raise self._missing(session_id)

    def _missing(self, session_id: str) -> RequestError:
        if owner_of(session_id) != self.owner:
            return SessionGoneError(
                f"session '{session_id}' was held by replica "
                f"'{owner_of(session_id)}', which no longer serves; create a "
                f"session from your last snapshot to go on")
        return RequestError(
            f"no session '{session_id}' (closed, or idle for more than "
            f"{self.idle_timeout_s:g} s)", 404)

    def _expire(self) -> None:
        deadline = self._clock() - self.idle_timeout_s
        for session_id in [s for s, (_, used) in self._sessions.items()
                           if used < deadline]:
            del self._sessions[session_id]
