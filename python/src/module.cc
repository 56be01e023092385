// The extension module seqrt._seqrt; seqrt/__init__.py re-exports it.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "python/src/session.h"
#include "python/src/stream.h"
#include "runtime/backend_registry.h"

namespace py = pybind11;

PYBIND11_MODULE(_seqrt, module) {
  module.doc() = "seqrt's runtime: Session, Stream (C++, pybind11).";
  module.attr("__version__") = SEQRT_VERSION;
  module.def("available_backends", &seqrt::compiled_backends,
             "Names of the backends compiled into this build, reference "
             "first.");
  seqrt::python::bind_session(module);
  seqrt::python::bind_stream(module);
}
