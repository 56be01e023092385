// seqrt.Session: a model compiled for one backend, run like an
// onnxruntime.InferenceSession on NumPy arrays.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "graph/tensor.h"
#include "runtime/session.h"

namespace seqrt::python {

void bind_session(pybind11::module_& module);

// `feeds`, a mapping of graph input name to array, as tensors.
// i4/u4/f4e2m1/float8 inputs of `graph` are taken as i8/u8/f32 arrays.
std::map<std::string, Tensor> tensors_from_feeds(pybind11::handle feeds,
                                                 const Graph& graph);

// A run's options from a `timeout` argument: None, or seconds > 0.
SessionRunOptions run_options_from(pybind11::handle timeout);

// The outputs `requested` names (None: every name of `available`, in its
// order). A name outside `available` raises InvalidArgumentError listing
// them; one of `held` (a Stream's state outputs) says the Stream keeps it.
std::vector<std::string> select_outputs(
    pybind11::handle requested, const std::vector<std::string>& available,
    const std::vector<std::string>& held, const std::string& graph_name);

// The tensors of `names`, in that order, as NumPy arrays.
pybind11::list arrays_from_outputs(std::map<std::string, Tensor> outputs,
                                   const std::vector<std::string>& names);

}  // namespace seqrt::python
