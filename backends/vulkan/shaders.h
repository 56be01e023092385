// The SPIR-V of every shader in shaders/*.comp, embedded at build time
// (glslc, spirv-val, spirv-opt; see CMakeLists.txt).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace seqrt::vulkan {

struct EmbeddedShader {
  const char* name;  // file name without .comp
  const uint32_t* words;
  size_t word_count;
};

// Null when no shader has that name.
const EmbeddedShader* find_shader(const std::string& name);
std::vector<std::string> shader_names();

}  // namespace seqrt::vulkan
