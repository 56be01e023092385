"""Request bodies to feeds, and results to response bodies, checked against
the model's inputs before anything runs.

Bodies (docs: python/seqrt/serve/README.md):
- JSON: {"inputs": {name: value}}, where a value is a nested list (cast to
  the input's dtype when that loses nothing: ints to a float input, not
  floats to an int input) or {"dtype": "float32", "shape": [...], "data":
  [...]} whose dtype must be the input's.
- NumPy: a `.npy` body (application/x-npy) for one input, named by the
  `input` query parameter or the model's only input; a `.npz` body
  (application/x-npz) for several, one array per input name.
Nothing here imports Ray: the codec is tested without a cluster.
"""

import io
import json
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Union

import numpy as np

NPY = "application/x-npy"
NPZ = "application/x-npz"
JSON = "application/json"

# ONNX Runtime's type strings (NodeArg.type) -> NumPy dtypes.
_ONNX_TYPES = {
    "tensor(float)": np.float32, "tensor(double)": np.float64,
    "tensor(float16)": np.float16, "tensor(int8)": np.int8,
    "tensor(int16)": np.int16, "tensor(int32)": np.int32,
    "tensor(int64)": np.int64, "tensor(uint8)": np.uint8,
    "tensor(uint16)": np.uint16, "tensor(uint32)": np.uint32,
    "tensor(uint64)": np.uint64, "tensor(bool)": np.bool_,
}


class RequestError(Exception):
    """A request the server refuses; `status` is its HTTP status."""

    status = 400

    def __init__(self, message: str, status: Optional[int] = None):
        super().__init__(message)
        if status is not None:
            self.status = status

    def __reduce__(self):  # crosses Ray's process boundary intact
        return (type(self), (str(self), self.status))


@dataclass(frozen=True)
class InputSpec:
    name: str
    dtype: np.dtype
    shape: List[Union[int, str, None]]  # int fixed, str symbolic, None unknown


def input_specs(session, skip: Sequence[str] = ()) -> Dict[str, InputSpec]:
    """The session's inputs by name, less those in `skip` (state inputs)."""
    specs = {}
    for arg in session.get_inputs():
        if arg.name in skip:
            continue
        if arg.type not in _ONNX_TYPES:
            raise RequestError(f"input '{arg.name}' has type {arg.type}, "
                               f"which the server cannot decode", 500)
        specs[arg.name] = InputSpec(arg.name, np.dtype(_ONNX_TYPES[arg.type]),
                                    list(arg.shape))
    return specs


def check_feeds(feeds: Dict[str, np.ndarray], specs: Dict[str, InputSpec],
                what: str) -> None:
    """Names, dtypes, ranks and fixed dims against the model; `what` names
    the model in the messages."""
    for name, array in feeds.items():
        if name not in specs:
            raise RequestError(f"{what} has no input '{name}'; its inputs "
                               f"are {sorted(specs)}")
        spec = specs[name]
        if array.dtype != spec.dtype:
            raise RequestError(f"input '{name}' of {what} is {spec.dtype}, "
                               f"got {array.dtype}")
        if array.ndim != len(spec.shape):
            raise RequestError(f"input '{name}' of {what} has shape "
                               f"{_shape_text(spec.shape)}, got "
                               f"{list(array.shape)}")
        for axis, (dim, size) in enumerate(zip(spec.shape, array.shape)):
            if isinstance(dim, int) and dim != size:
                raise RequestError(f"input '{name}' of {what} has shape "
                                   f"{_shape_text(spec.shape)}, got "
                                   f"{list(array.shape)} (axis {axis})")
    missing = sorted(set(specs) - set(feeds))
    if missing:
        raise RequestError(f"{what} needs input(s) {missing}")


def _shape_text(shape) -> str:
    return "[" + ", ".join(str(d) if d is not None else "?"
                           for d in shape) + "]"


def feeds_from_body(body: bytes, content_type: str,
                    specs: Dict[str, InputSpec],
                    input_name: Optional[str] = None
                    ) -> Dict[str, np.ndarray]:
    """Decodes a request body by its content type (not yet checked)."""
    kind = (content_type or JSON).split(";")[0].strip().lower()
    if kind == NPY:
        if input_name is None:
            if len(specs) != 1:
                raise RequestError(
                    f"a .npy body is one input: name it with ?input=NAME "
                    f"(the inputs are {sorted(specs)})")
            input_name = next(iter(specs))
        return {input_name: _load_npy(body)}
    if kind == NPZ:
        return load_npz(body)
    if kind == JSON:
        return _feeds_from_json(body, specs)
    raise RequestError(f"content type '{kind}' is not one of {JSON}, {NPY}, "
                       f"{NPZ}", 415)


def _load_npy(body: bytes) -> np.ndarray:
    try:
        return np.load(io.BytesIO(body), allow_pickle=False)
    except Exception as error:  # NumPy raises several types for bad files
        raise RequestError(f"the body is not a .npy array: {error}") from None


def load_npz(body: bytes) -> Dict[str, np.ndarray]:
    try:
        with np.load(io.BytesIO(body), allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except Exception as error:
        raise RequestError(f"the body is not a .npz archive: {error}") from None


def _feeds_from_json(body: bytes, specs) -> Dict[str, np.ndarray]:
    try:
        document = json.loads(body or b"{}")
    except ValueError as error:
        raise RequestError(f"the body is not JSON: {error}") from None
    if not isinstance(document, dict) or not isinstance(
            document.get("inputs"), dict):
        raise RequestError('a JSON body is {"inputs": {name: value}}')
    feeds = {}
    for name, value in document["inputs"].items():
        if name not in specs:
            raise RequestError(f"the model has no input '{name}'; its inputs "
                               f"are {sorted(specs)}")
        feeds[name] = array_from_json(name, value, specs[name].dtype)
    return feeds


def array_from_json(name: str, value, dtype: np.dtype) -> np.ndarray:
    """A nested list, or {"dtype", "shape", "data"}, as an array of `dtype`."""
    if isinstance(value, dict):
        if value.get("dtype") is not None and np.dtype(
                _dtype_or_error(name, value["dtype"])) != dtype:
            raise RequestError(f"input '{name}' is {dtype}, got "
                               f"{value['dtype']}")
        array = _as_array(name, value.get("data"))
        if value.get("shape") is not None:
            try:
                array = array.reshape(value["shape"])
            except (ValueError, TypeError):
                raise RequestError(
                    f"input '{name}': {array.size} values do not make shape "
                    f"{value['shape']}") from None
    else:
        array = _as_array(name, value)
    if array.size == 0:
        return array.astype(dtype)
    if not np.can_cast(array.dtype, dtype, casting="same_kind"):
        raise RequestError(f"input '{name}' is {dtype}, got values of "
                           f"{array.dtype}")
    return array.astype(dtype)


def _dtype_or_error(name, text):
    try:
        return np.dtype(text)
    except TypeError:
        raise RequestError(f"input '{name}': unknown dtype '{text}'") from None


def _as_array(name, data) -> np.ndarray:
    if data is None:
        raise RequestError(f"input '{name}' has no data")
    try:
        return np.asarray(data)
    except ValueError as error:  # ragged nested lists
        raise RequestError(f"input '{name}' is not a rectangular array: "
                           f"{error}") from None


def json_outputs(outputs: Dict[str, np.ndarray]) -> dict:
    return {"outputs": {name: {"dtype": str(array.dtype),
                               "shape": list(array.shape),
                               "data": array.tolist()}
                        for name, array in outputs.items()}}


def npz_bytes(arrays: Dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()
