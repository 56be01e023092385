#include "python/src/session.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "importers/tensor/npy.h"
#include "python/src/errors.h"
#include "python/src/numpy_tensor.h"
#include "runtime/backend_registry.h"
#include "runtime/model_loader.h"
#include "runtime/multi_backend.h"

namespace py = pybind11;

namespace seqrt::python {
namespace {

// An input or output as onnxruntime describes it.
struct NodeArg {
  std::string name;
  py::object shape;  // list of int / str (symbolic) / None (unknown); None
                     // when even the rank is unknown
  std::string type;
};

NodeArg node_arg(const Value& value) {
  py::object shape = py::none();
  if (value.shape) {
    py::list dims;
    for (const Dim& dim : value.shape->dims()) {
      if (dim.is_fixed()) {
        dims.append(dim.value());
      } else if (dim.is_symbol()) {
        dims.append(dim.symbol_name());
      } else {
        dims.append(py::none());
      }
    }
    shape = std::move(dims);
  }
  return NodeArg{value.name, std::move(shape), onnx_type_string(value.dtype)};
}

std::vector<NodeArg> node_args(const Graph& graph,
                               const std::vector<ValueId>& ids) {
  std::vector<NodeArg> args;
  for (ValueId id : ids) args.push_back(node_arg(graph.value(id)));
  return args;
}

std::vector<std::string> output_names(const Graph& graph) {
  std::vector<std::string> names;
  for (ValueId id : graph.outputs) names.push_back(graph.value(id).name);
  return names;
}

// {"device": 1, "fp16_weights": True, "forms": "chunked"}: values as
// bool, int or str, each key checked by set_backend_option.
BackendOptions backend_options_from(py::handle given) {
  BackendOptions options;
  if (given.is_none()) return options;
  if (!py::isinstance<py::dict>(given)) {
    throw py::type_error(
        fmt::format("backend_options must be a dict of option name to value, "
                    "got {}",
                    text(py::type::of(given))));
  }
  for (const auto& [key, value] : py::reinterpret_borrow<py::dict>(given)) {
    if (!py::isinstance<py::str>(key)) {
      throw py::type_error(fmt::format(
          "backend option names must be str, got {}", text(py::repr(key))));
    }
    std::string name = key.cast<std::string>();
    std::string setting;
    if (py::isinstance<py::bool_>(value)) {
      setting = value.cast<bool>() ? "true" : "false";
    } else if (py::isinstance<py::int_>(value) ||
               py::isinstance<py::str>(value)) {
      setting = text(py::str(value));
    } else {
      throw py::type_error(
          fmt::format("backend option '{}' must be a bool, int or str, got {}",
                      name, text(py::repr(value))));
    }
    check(set_backend_option(options, name, setting));
  }
  return options;
}

// `backend` as a str ("cpu", "vulkan,cpu") or a list of str (["vulkan",
// "cpu"]: heterogeneous execution), each name one of this build's.
std::string backend_name_from(const py::object& given) {
  std::string list;
  if (py::isinstance<py::str>(given)) {
    list = given.cast<std::string>();
  } else if (py::isinstance<py::list>(given) ||
             py::isinstance<py::tuple>(given)) {
    std::vector<std::string> names;
    for (py::handle item : given) {
      if (!py::isinstance<py::str>(item)) {
        raise_status(invalid_argument(
            "backend list entries must be str, got {}", text(py::repr(item))));
      }
      names.push_back(item.cast<std::string>());
    }
    list = fmt::format("{}", fmt::join(names, ","));
  } else {
    raise_status(
        invalid_argument("backend must be a str or a list of str, got {}",
                         text(py::repr(given))));
  }
  std::vector<std::string> backends = compiled_backends();
  Result<std::vector<std::string>> names = parse_backend_list(list);
  if (!names.is_ok()) raise_status(names.status());
  for (const std::string& name : *names) {
    if (std::find(backends.begin(), backends.end(), name) == backends.end()) {
      raise_status(invalid_argument("unknown backend '{}'; this build has: {}",
                                    name, fmt::join(backends, ", ")));
    }
  }
  return list;
}

std::shared_ptr<Session> load_session(
    const py::object& path, const py::object& backend_arg, bool optimize,
    const std::optional<std::map<std::string, int64_t>>& bind, int num_threads,
    bool mmap, const py::object& backend_options, int64_t kv_cache_capacity) {
  const std::string file =
      py::str(py::module_::import("os").attr("fspath")(path));
  const std::string backend = backend_name_from(backend_arg);
  if (num_threads < 0) {
    raise_status(
        invalid_argument("num_threads must be >= 0, got {}", num_threads));
  }
  Result<ModelFormat> format = detect_model_format(file);
  if (!format.is_ok() && format.status().code() == StatusCode::kNotFound) {
    raise_model_not_found(format.status().message());
  }
  SessionOptions options;
  options.backend = backend;
  options.backend_options = backend_options_from(backend_options);
  options.optimize = optimize;
  options.compile.num_threads = num_threads;
  if (kv_cache_capacity < 0) {
    raise_status(invalid_argument("kv_cache_capacity must be >= 0, got {}",
                                  kv_cache_capacity));
  }
  options.kv_cache_capacity = kv_cache_capacity;
  if (bind) {
    for (const auto& [symbol, size] : *bind) {
      if (size < 0) {
        raise_status(invalid_argument(
            "bind: dim '{}' must be a size >= 0, got {}", symbol, size));
      }
    }
    options.compile.dim_bindings = *bind;
  }
  std::optional<Result<std::unique_ptr<Session>>> session;
  {
    py::gil_scoped_release release;
    // Session::load with the file read into memory when mmap is off.
    Result<Graph> graph = load_model(
        file, options.progress, mmap ? FileAccess::kMap : FileAccess::kCopy);
    if (graph.is_ok()) {
      session.emplace(
          Session::create(std::move(graph).value(), std::move(options)));
    } else {
      session.emplace(graph.status());
    }
  }
  return std::shared_ptr<Session>(unwrap(std::move(*session)));
}

py::list run_session(const Session& session, const py::object& output_names,
                     const py::object& feeds, const py::object& timeout) {
  const Graph& graph = session.graph();
  std::vector<std::string> names =
      select_outputs(output_names, python::output_names(graph), {}, graph.name);
  std::map<std::string, Tensor> inputs = tensors_from_feeds(feeds, graph);
  const SessionRunOptions run_options = run_options_from(timeout);
  std::optional<Result<std::map<std::string, Tensor>>> outputs;
  {
    py::gil_scoped_release release;
    outputs.emplace(session.run(std::move(inputs), run_options));
  }
  return arrays_from_outputs(unwrap(std::move(*outputs)), names);
}

py::list state_pairs(const Session& session) {
  const Graph& graph = session.graph();
  py::list pairs;
  for (const StatePair& pair : graph.state_pairs) {
    pairs.append(py::make_tuple(graph.value(pair.input).name,
                                graph.value(pair.output).name));
  }
  return pairs;
}

std::string node_arg_repr(const NodeArg& arg) {
  return fmt::format("NodeArg(name='{}', type='{}', shape={})", arg.name,
                     arg.type, text(py::repr(arg.shape)));
}

}  // namespace

SessionRunOptions run_options_from(py::handle timeout) {
  SessionRunOptions run_options;
  if (timeout.is_none()) return run_options;
  const double seconds = timeout.cast<double>();
  if (!(seconds > 0) || seconds > 1e9) {
    raise_status(invalid_argument(
        "timeout must be a number of seconds > 0 (or None), got {}", seconds));
  }
  // At least 1 ms: 0 would mean no deadline.
  run_options.timeout_ms =
      std::max<int64_t>(1, static_cast<int64_t>(seconds * 1000.0));
  return run_options;
}

std::map<std::string, Tensor> tensors_from_feeds(py::handle feeds,
                                                 const Graph& graph) {
  if (!py::hasattr(feeds, "items")) {
    throw py::type_error(
        fmt::format("feeds must be a dict of input name to array, got {}",
                    text(py::type::of(feeds))));
  }
  std::map<std::string, Tensor> tensors;
  for (py::handle item : feeds.attr("items")()) {
    py::tuple pair = py::reinterpret_borrow<py::tuple>(item);
    if (!py::isinstance<py::str>(pair[0])) {
      throw py::type_error(fmt::format("feed names must be str, got {}",
                                       text(py::repr(pair[0]))));
    }
    std::string name = pair[0].cast<std::string>();
    tensors[name] = tensor_from_array(pair[1], fmt::format("feed '{}'", name));
  }
  // i4/u4/f4e2m1/float8 inputs come as i8/u8/f32 arrays, as from .npy files.
  check(feeds_from_npy_compatible(graph, tensors));
  return tensors;
}

std::vector<std::string> select_outputs(
    py::handle requested, const std::vector<std::string>& available,
    const std::vector<std::string>& held, const std::string& graph_name) {
  if (requested.is_none()) return available;
  if (py::isinstance<py::str>(requested)) {
    throw py::type_error(
        "output_names must be a list of names or None, not a str");
  }
  std::vector<std::string> names;
  for (py::handle item : requested) {
    if (!py::isinstance<py::str>(item)) {
      throw py::type_error(fmt::format("output names must be str, got {}",
                                       text(py::repr(item))));
    }
    std::string name = item.cast<std::string>();
    auto known = [&](const std::vector<std::string>& list) {
      return std::find(list.begin(), list.end(), name) != list.end();
    };
    if (known(held)) {
      raise_status(invalid_argument(
          "output '{}' of graph '{}' is state the stream keeps for its next "
          "run; use snapshot() to save it",
          name, graph_name));
    }
    if (!known(available)) {
      raise_status(
          invalid_argument("graph '{}' has no output '{}'; its "
                           "outputs are: {}",
                           graph_name, name, fmt::join(available, ", ")));
    }
    names.push_back(std::move(name));
  }
  return names;
}

py::list arrays_from_outputs(std::map<std::string, Tensor> outputs,
                             const std::vector<std::string>& names) {
  // Handles of the picked tensors only, so a result shares its storage with
  // nothing but a repeat of itself in `names` (then both are copied).
  std::vector<Tensor> picked;
  for (const std::string& name : names) {
    auto it = outputs.find(name);
    if (it == outputs.end()) {
      raise_status(internal_error("the run returned no output '{}'", name));
    }
    picked.push_back(it->second);
  }
  outputs.clear();
  py::list arrays;
  for (size_t i = 0; i < names.size(); ++i) {
    arrays.append(array_from_tensor(std::move(picked[i]),
                                    fmt::format("output '{}'", names[i])));
  }
  return arrays;
}

void bind_session(py::module_& module) {
  py::class_<NodeArg>(module, "NodeArg",
                      "A graph input or output, as onnxruntime describes "
                      "one: name, shape and type.")
      .def_readonly("name", &NodeArg::name)
      .def_readonly("shape", &NodeArg::shape,
                    "Dims: int when fixed, str when symbolic ('seq'), "
                    "None when unknown.")
      .def_readonly("type", &NodeArg::type, "e.g. 'tensor(float)'.")
      .def("__repr__", &node_arg_repr);

  py::class_<Session, std::shared_ptr<Session>>(
      module, "Session",
      "A model (.onnx or .seqrt) compiled once for one backend.\n\n"
      "    session = seqrt.Session('model.onnx', backend='cpu')\n"
      "    y, = session.run(['y'], {'x': x})\n")
      .def(py::init(&load_session), py::arg("path"),
           py::arg("backend") = py::str("cpu"), py::arg("optimize") = true,
           py::arg("bind") = py::none(), py::arg("num_threads") = 0,
           py::arg("mmap") = true, py::arg("backend_options") = py::none(),
           py::arg("kv_cache_capacity") = 0,
           "Loads `path` and compiles it for `backend` (see "
           "available_backends()); a list such as ['vulkan', 'cpu'] splits "
           "the graph between backends, each node on the first that runs "
           "it. optimize=False runs the graph as given, "
           "without the fusion passes; bind maps symbolic dims to sizes "
           "({'seq': 128}) for the compile; num_threads=0 is the backend's "
           "default. mmap=True maps a .seqrt file (weights used in place: the "
           "file must not be truncated or rewritten while the session lives); "
           "mmap=False reads it into memory, so the file may change. "
           "backend_options sets what the backend is opened with "
           "({'device': 1, 'fp16_weights': True, 'forms': 'chunked'}; the "
           "keys each backend takes are in backends/README.md); an unknown "
           "key or a bad value raises InvalidArgumentError naming it, and "
           "the backend's environment variables (SEQRT_VULKAN_*, "
           "SEQRT_CUDA_DEVICE) override these where set. kv_cache_capacity "
           "> 0: the Streams of this session hold each KV cache at that many "
           "tokens, written in place (a decode step costs its new tokens; a "
           "step past it raises); 0 lets the cache grow as the graph says.")
      .def("run", &run_session, py::arg("output_names"), py::arg("feeds"),
           py::arg("timeout") = py::none(),
           "Runs the model on `feeds` (input name -> array) and returns the "
           "outputs named in `output_names` (None: all, in graph order) as a "
           "list of arrays. Unfed state inputs start from their initial "
           "value. Releases the GIL: several threads may run one Session. "
           "`timeout` (seconds) bounds the run: past it the run raises "
           "DeadlineExceededError, and the session stays usable.")
      .def(
          "cancel", [](const Session& s) { s.cancel(); },
          "Stops every run in flight on this session (run() and Stream "
          "steps, from other threads): each raises CancelledError and "
          "leaves the session and a stream's state as before it. Runs "
          "started afterwards are not affected.")
      .def(
          "get_inputs",
          [](const Session& s) {
            return node_args(s.graph(), s.graph().inputs);
          },
          "The graph's inputs (state inputs included), in order.")
      .def(
          "get_outputs",
          [](const Session& s) {
            return node_args(s.graph(), s.graph().outputs);
          },
          "The graph's outputs, in order.")
      .def_property_readonly(
          "backend", [](const Session& s) { return s.options().backend; })
      .def_property_readonly(
          "metadata", [](const Session& s) { return s.graph().metadata; },
          "The model's metadata strings (a dict).")
      .def_property_readonly("state_pairs", &state_pairs,
                             "(state input, state output) name pairs: "
                             "what a Stream carries from run to run.")
      .def("__repr__", [](const Session& s) {
        return fmt::format("seqrt.Session(graph='{}', backend='{}')",
                           s.graph().name, s.options().backend);
      });
}

}  // namespace seqrt::python
