"""seqrt: a compute-graph runtime for sequence models.

The runtime, through its C++ extension `seqrt._seqrt`:

    import numpy as np
    import seqrt

    session = seqrt.Session("model.onnx", backend="cpu")   # or .seqrt
    print([i.name for i in session.get_inputs()])
    y, = session.run(["y"], {"x": np.zeros((1, 16, 64), np.float32)})

    stream = seqrt.Stream(session)        # a model with state pairs
    y, = stream.prefill({"x": prompt})    # the state stays in the runtime
    y, = stream.step({"x": next_token})

`seqrt.export` (pure Python, needs PyTorch) turns PyTorch modules that use
seqrt's sequence ops into ONNX files that both seqrt (as fused ops) and any
other ONNX runtime (through ONNX functions) can run. Importing `seqrt`
does not import PyTorch.
"""

from ._errors import (CancelledError, DeadlineExceededError, InternalError,
                      InvalidArgumentError, InvalidModelError, IoError,
                      LimitExceededError, ModelNotFoundError, NotFoundError,
                      OutOfMemoryError, SeqrtError, UnsupportedError)

_RUNTIME_NAMES = ("Session", "Stream", "StreamSnapshot", "NodeArg",
                  "available_backends")

try:
    from ._seqrt import (NodeArg, Session, Stream, StreamSnapshot,
                         available_backends)
    from ._seqrt import __version__
except ImportError as _error:
    # A source checkout without the built extension still serves
    # seqrt.export; the runtime's names say what is missing when used.
    _missing = _error
    try:
        from importlib.metadata import version as _version
        __version__ = _version("seqrt")
    except Exception:  # not installed: a bare source checkout
        __version__ = "unknown"

    def __getattr__(name):
        if name in _RUNTIME_NAMES:
            raise ImportError(
                f"seqrt.{name} needs the C++ extension seqrt._seqrt, which "
                f"did not import ({_missing}); install the package with "
                f"`pip install ./python` from the seqrt repository"
            ) from _missing
        raise AttributeError(f"module 'seqrt' has no attribute '{name}'")

__all__ = list(_RUNTIME_NAMES) + [
    "SeqrtError", "InvalidArgumentError", "InvalidModelError",
    "NotFoundError", "ModelNotFoundError", "UnsupportedError",
    "OutOfMemoryError", "LimitExceededError", "IoError", "CancelledError",
    "DeadlineExceededError", "InternalError", "__version__"]
