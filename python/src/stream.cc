#include "python/src/stream.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "python/src/errors.h"
#include "python/src/numpy_tensor.h"
#include "python/src/session.h"
#include "runtime/stream.h"

namespace py = pybind11;

namespace seqrt::python {
namespace {

// A saved state: the tensors are immutable, so it stays valid while the
// Stream it came from runs on.
struct Snapshot {
  std::map<std::string, Tensor> state;
};

// Holds its Session, so Python may drop the Session first. One mutex per
// stream: a Stream is one sequence, and two threads stepping it at once
// would interleave its state, so they take turns.
class PyStream {
 public:
  explicit PyStream(std::shared_ptr<Session> session)
      : session_(std::move(session)), stream_(*session_) {
    const Graph& graph = session_->graph();
    for (const StatePair& pair : graph.state_pairs) {
      state_outputs_.push_back(graph.value(pair.output).name);
    }
    for (ValueId id : graph.outputs) {
      const std::string& name = graph.value(id).name;
      if (std::find(state_outputs_.begin(), state_outputs_.end(), name) ==
          state_outputs_.end()) {
        returned_.push_back(name);
      }
    }
  }

  std::shared_ptr<Session> session() const { return session_; }

  py::list run(const py::object& feeds, const py::object& output_names,
               const py::object& timeout) {
    std::vector<std::string> names = select_outputs(
        output_names, returned_, state_outputs_, session_->graph().name);
    std::map<std::string, Tensor> inputs =
        tensors_from_feeds(feeds, session_->graph());
    const SessionRunOptions run_options = run_options_from(timeout);
    std::optional<Result<std::map<std::string, Tensor>>> outputs;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      outputs.emplace(stream_.run(inputs, run_options));
      inputs.clear();  // the feeds' views go while the GIL is free
    }
    return arrays_from_outputs(unwrap(std::move(*outputs)), names);
  }

  Snapshot snapshot() {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    return Snapshot{stream_.snapshot()};
  }

  void restore(const Snapshot& snapshot) {
    Status status;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      status = stream_.restore(snapshot.state);
    }
    check(status);
  }

  void reset() {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    stream_.reset();
  }

 private:
  std::shared_ptr<Session> session_;  // before stream_, which borrows it
  Stream stream_;
  std::mutex mutex_;
  std::vector<std::string> state_outputs_;
  std::vector<std::string> returned_;  // the outputs that are not state
};

std::string snapshot_repr(const Snapshot& snapshot) {
  std::vector<std::string> names;
  for (const auto& entry : snapshot.state) names.push_back(entry.first);
  return fmt::format("seqrt.StreamSnapshot([{}])", fmt::join(names, ", "));
}

}  // namespace

void bind_stream(py::module_& module) {
  py::class_<Snapshot>(module, "StreamSnapshot",
                       "A Stream's saved state (from Stream.snapshot()); "
                       "give it to Stream.restore().")
      .def_property_readonly(
          "names",
          [](const Snapshot& s) {
            std::vector<std::string> names;
            for (const auto& entry : s.state) names.push_back(entry.first);
            return names;
          },
          "The state inputs it holds (empty before the first run).")
      .def(
          "arrays",
          [](const Snapshot& s) {
            py::dict arrays;
            for (const auto& [name, tensor] : s.state) {
              arrays[py::str(name)] =
                  array_from_tensor(tensor, fmt::format("state '{}'", name));
            }
            return arrays;
          },
          "The state as a dict of state input name -> array (copies): what "
          "a client keeps to restore the sequence elsewhere.")
      .def_static(
          "from_arrays",
          [](const py::handle& arrays) {
            if (!py::hasattr(arrays, "items")) {
              throw py::type_error(
                  "StreamSnapshot.from_arrays takes a dict of state input "
                  "name to array");
            }
            py::object copy = py::module_::import("numpy").attr("array");
            Snapshot snapshot;
            for (py::handle item : arrays.attr("items")()) {
              py::tuple pair = py::reinterpret_borrow<py::tuple>(item);
              const std::string name = py::str(pair[0]);
              // A copy: the caller may change its arrays afterwards.
              snapshot.state.emplace(
                  name, tensor_from_array(copy(pair[1], py::arg("copy") = true),
                                          fmt::format("state '{}'", name)));
            }
            return snapshot;
          },
          py::arg("arrays"),
          "A snapshot made of arrays (as arrays() returns them); "
          "Stream.restore() checks the names and types against the model.")
      .def("__repr__", &snapshot_repr);

  const char* run_doc =
      "Runs the session on `feeds` plus the held state and keeps the new "
      "state. Returns the outputs that are not state, named in "
      "`output_names` (None: all, in graph order), as a list of arrays. A "
      "state input in `feeds` replaces the held state for this run. "
      "`timeout` (seconds) bounds the step; a step that fails (timed out, "
      "cancelled by session.cancel(), bad feeds) leaves the state as it "
      "was.";
  py::class_<PyStream>(
      module, "Stream",
      "The state of one sequence on a Session whose model has state pairs "
      "(KV caches, scan states). prefill() the prompt, then step() token by "
      "token; the state stays inside the runtime between calls.\n\n"
      "    stream = seqrt.Stream(session)\n"
      "    y, = stream.prefill({'x': prompt})\n"
      "    y, = stream.step({'x': next_token})\n")
      .def(py::init<std::shared_ptr<Session>>(), py::arg("session"))
      .def_property_readonly("session", &PyStream::session)
      .def("prefill", &PyStream::run, py::arg("feeds"),
           py::arg("output_names") = py::none(),
           py::arg("timeout") = py::none(), run_doc)
      .def("step", &PyStream::run, py::arg("feeds"),
           py::arg("output_names") = py::none(),
           py::arg("timeout") = py::none(), run_doc)
      .def("snapshot", &PyStream::snapshot,
           "The current state, to restore() later. Cheap: it shares the "
           "tensors (the next run then copies the state it replaces); on a "
           "session with kv_cache_capacity it copies each cache, cut to its "
           "cached tokens.")
      .def("restore", &PyStream::restore, py::arg("snapshot"),
           "Makes a snapshot the state again.")
      .def("reset", &PyStream::reset, "Back to the initial state.");
}

}  // namespace seqrt::python
