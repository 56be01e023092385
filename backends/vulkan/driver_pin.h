// Keeps the libraries the Vulkan loader opens for an instance (the driver,
// the compiler it links such as LLVM, the layers) loaded for the rest of the
// process. The loader unloads them when the instance is destroyed; some
// drivers keep state in globals across instances and do not survive an
// unload and reload, and a library unloaded with live allocations makes
// LeakSanitizer report them without a name. seqrt's CUDA plugin is likewise
// never unloaded.
#pragma once

#include <set>
#include <string>

namespace seqrt::vulkan {

// The paths of the shared libraries loaded in this process now.
std::set<std::string> loaded_libraries();

// Marks every library loaded now but not in `before` as never to be unloaded
// (RTLD_NODELETE on the already loaded library).
void keep_loaded_since(const std::set<std::string>& before);

}  // namespace seqrt::vulkan
