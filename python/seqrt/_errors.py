"""Exceptions raised by seqrt's runtime: one class per error code of the
C++ runtime (graph/status.h). Each also derives from the built-in
exception a Python user would catch for it, so `except ValueError` works
for bad input and `except FileNotFoundError` for a missing model."""


class SeqrtError(Exception):
    """Base class of every error the seqrt runtime reports."""


class InvalidArgumentError(SeqrtError, ValueError):
    """Bad input: unknown or missing feeds, wrong dtypes or shapes."""


class InvalidModelError(SeqrtError, ValueError):
    """A malformed or inconsistent model file or graph."""


class NotFoundError(SeqrtError, LookupError):
    """Something named does not exist: an op, a value, a backend's device."""


class ModelNotFoundError(NotFoundError, FileNotFoundError):
    """The model file does not exist."""


class UnsupportedError(SeqrtError, NotImplementedError):
    """Valid, but not supported here (an op, a dtype, a backend)."""


class OutOfMemoryError(SeqrtError, MemoryError):
    """An allocation failed."""


class LimitExceededError(SeqrtError, RuntimeError):
    """A configured resource limit was reached."""


class IoError(SeqrtError, OSError):
    """Reading or writing a file failed."""


class CancelledError(SeqrtError, RuntimeError):
    """The run was stopped by Session.cancel(); the session is usable."""


class DeadlineExceededError(SeqrtError, TimeoutError):
    """The run passed its timeout; the session is usable."""


class InternalError(SeqrtError, RuntimeError):
    """A bug in seqrt: please report it with the message."""


__all__ = ["SeqrtError", "InvalidArgumentError", "InvalidModelError",
           "NotFoundError", "ModelNotFoundError", "UnsupportedError",
           "OutOfMemoryError", "LimitExceededError", "IoError",
           "CancelledError", "DeadlineExceededError", "InternalError"]
