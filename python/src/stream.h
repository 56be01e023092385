// seqrt.Stream: the state of one sequence on a Session (prefill, then
// steps), and seqrt.StreamSnapshot, a saved state.
#pragma once

#include <pybind11/pybind11.h>

namespace seqrt::python {

void bind_stream(pybind11::module_& module);

}  // namespace seqrt::python
