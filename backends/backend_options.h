// What a user may ask of a backend when it is created: which device, fp16
// weights, the sequence ops' forms. One struct carried by
// SessionOptions::backend_options, the C API
// (seqrt_session_options_set_backend_option), Python
// (Session(..., backend_options={...})) and the CLI (--backend-option
// KEY=VALUE); each backend declares the keys it takes (BackendOptionSpec)
// and refuses any other by name.
//
// Precedence: an environment variable a backend documents (SEQRT_VULKAN_*,
// SEQRT_CUDA_DEVICE) overrides the option of the same meaning, so a
// deployment can redirect a program without changing it; an option the
// environment does not set is used as given; the backend's default fills
// the rest.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/status.h"

namespace seqrt {

struct BackendOptions {
  // "device": the device's index in the backend's own order (Vulkan:
  // vkEnumeratePhysicalDevices; CUDA: cudaGetDevice). Host backends have
  // one device, 0.
  std::optional<int> device;
  // "fp16_weights": store fp32 MatMul/Gemm weights as fp16 (Vulkan).
  std::optional<bool> fp16_weights;
  // Keys only one backend takes, as given; that backend checks the values
  // (Vulkan: "forms", "device_name", "validation").
  std::map<std::string, std::string> other;
  // Options for one backend of a list ("vulkan,cpu"), given as
  // BACKEND.KEY=VALUE: backend name -> key -> value as text. Keys without a
  // backend go to the first backend of a list.
  std::map<std::string, std::map<std::string, std::string>> per_backend;

  // Parses one KEY=VALUE as the C API, Python and the CLI give it:
  // "device" a non-negative integer, "fp16_weights" a boolean (1, 0, true,
  // false, on, off, yes, no); other keys are kept as text; BACKEND.KEY goes
  // to per_backend (its value checked as KEY's). kInvalidArgument naming
  // the key and what was expected.
  Status set(const std::string& key, const std::string& value);
  // The keys set, sorted.
  std::vector<std::string> keys() const;
};

// The options backend `names[index]` of a list is created with: the keys
// without a backend when it is the first, then its BACKEND.KEY ones.
// kInvalidArgument when a BACKEND.KEY names a backend not in `names`.
Result<BackendOptions> options_for_backend(const BackendOptions& options,
                                           const std::vector<std::string>& names,
                                           size_t index);

// One key a backend takes, for its error messages and for the docs.
struct BackendOptionSpec {
  const char* key;
  const char* values;  // e.g. "auto, recurrent or chunked"
};

// Ok when every key set in `options` is one of `accepted`; else
// kInvalidArgument "<backend> backend: no option 'KEY'; it takes: ..."
// listing the accepted keys and their values.
Status check_backend_option_keys(
    const std::string& backend, const BackendOptions& options,
    const std::vector<BackendOptionSpec>& accepted);

// A boolean option's text (1, 0, true, false, on, off, yes, no; any case);
// kInvalidArgument naming `key` otherwise.
Result<bool> parse_bool_option(const std::string& key,
                               const std::string& value);

// The device option of a backend with one device (the host backends): ok
// for none or 0, else kUnsupported naming the index asked for.
Status check_single_device(const std::string& backend,
                           const BackendOptions& options);

}  // namespace seqrt
