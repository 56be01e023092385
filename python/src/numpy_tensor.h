// NumPy arrays <-> seqrt tensors.
//
// Feeds: a C-contiguous, native-endian array whose data is 64-byte aligned
// (the alignment of seqrt's own tensors) is passed as a read-only view that
// keeps the array alive; any other array is copied. Results: an array over
// the tensor's storage, which the array keeps alive, when the tensor is the
// only handle to it; otherwise a copy, so no result aliases a weight, a
// feed or another result.
#pragma once

#include <string>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "graph/dtype.h"
#include "graph/tensor.h"

namespace seqrt::python {

// `object` (an array or anything np.asarray takes) as a tensor. Raises
// TypeError naming `what` (e.g. "feed 'x'") for a dtype seqrt lacks.
Tensor tensor_from_array(pybind11::handle object, const std::string& what);

// `tensor` as a NumPy array; raises TypeError for bfloat16 when NumPy has
// no bfloat16 type (ml_dtypes not installed).
pybind11::array array_from_tensor(Tensor tensor, const std::string& what);

// ONNX Runtime's type string: "tensor(float)", "tensor(int64)", ...
std::string onnx_type_string(DType dtype);

}  // namespace seqrt::python
