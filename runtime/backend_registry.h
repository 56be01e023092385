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

// kNotFound naming the compiled backends when `name` is not one of them;
// kUnsupported when the backend is compiled but its device is missing.
Result<std::unique_ptr<Backend>> create_backend(const std::string& name);

}  // namespace seqrt
