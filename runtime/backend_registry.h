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

// A list of names separated by commas ("vulkan,cpu") makes a backend that
// splits each graph between them (runtime/multi_backend.h).
// kNotFound naming the compiled backends when `name` is not one of them;
// kNoDevice when the backend is compiled but this machine has no device
// for it (no driver, no GPU); kInvalidArgument naming the key when
// `options` has one the backend does not take or a value it refuses
// (backends/backend_options.h; environment variables override options).
Result<std::unique_ptr<Backend>> create_backend(
    const std::string& name, const BackendOptions& options = {});

// The option keys backend `name` takes (empty for a name not compiled).
std::vector<BackendOptionSpec> backend_option_specs(const std::string& name);

// BackendOptions::set, refusing at once a key that no backend of this
// build takes (naming the keys they do take); a key only some backends
// take is checked again when the backend is created.
Status set_backend_option(BackendOptions& options, const std::string& key,
                          const std::string& value);

}  // namespace seqrt
