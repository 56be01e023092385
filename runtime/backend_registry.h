// The backends compiled into this build, created by name. Only runtime/
// ties backends to the rest.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"

namespace seqrt {

// Names of the backends in this build, reference first.
std::vector<std::string> compiled_backends();

// The backend used when none is named (Session, the CLI, the C API): "cpu"
// when built, the fastest that needs no device; else "reference".
std::string default_backend();

// kNotFound naming the compiled backends when `name` is not one of them;
// kNoDevice when the backend is compiled but this machine has no device
// for it (no driver, no GPU).
Result<std::unique_ptr<Backend>> create_backend(const std::string& name);

}  // namespace seqrt
