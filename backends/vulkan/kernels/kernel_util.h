// Shape arithmetic the standard-op kernels share: row-major strides,
// broadcast strides, workgroup counts, and the fp32 check.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "backends/vulkan/kernel.h"

namespace seqrt::vulkan {

// The generic shaders take at most this many dims (more are merged or
// rejected by supports()).
inline constexpr int kMaxRank = 6;
// Invocations per workgroup of the 1-D shaders.
inline constexpr uint32_t kLocalSize = 64;

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims);
// Strides (in elements) that read `dims` as if broadcast to `out_dims`
// (numpy rules: right-aligned, size-1 dims get stride 0).
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& dims,
                                       const std::vector<int64_t>& out_dims);
int64_t element_count(const std::vector<int64_t>& dims);
// Workgroups covering `count` invocations of kLocalSize, as x (and y when
// x would pass the device's limit).
std::array<uint32_t, 3> groups_for(int64_t count, const DeviceLimits& limits);
// `count` workgroups (one per row, for example) as x, spilling into y when
// x would pass the device's limit; shaders/row_reduce.glsl row_index()
// undoes it.
std::array<uint32_t, 3> groups_for_rows(int64_t count,
                                        const DeviceLimits& limits);
// Attributes: ops/node_attrs.h (node_attr_int...), which falls back to the
// op schema's default, so no kernel restates one.
// `axis` (possibly negative) as an index into `rank` dims.
int64_t normalized_axis(int64_t axis, size_t rank);
// kUnsupported naming the first input or output that is not fp32.
Status require_f32(const Graph& graph, const Node& node);
// 32-bit words per element, or 0 when the dtype is not a whole number of
// words (bool, f16...).
uint32_t element_words(DType dtype);
// How the copy-like shaders (where, trilu, tile) move elements of `dtype`:
// `words` 32-bit words each (f32, i32: 1; i64: 2), or, with words 0, parts
// of `part_bytes` (bool: 1, f16: 2) packed in a word, one output word per
// invocation. Specialisation constants WORDS and PART_BYTES.
struct ElementLayout {
  uint32_t words = 1;
  uint32_t part_bytes = 4;
  // Output elements each invocation makes.
  int64_t per_invocation() const { return words == 0 ? 4 / part_bytes : 1; }
};
ElementLayout element_layout(DType dtype);
// kUnsupported unless value `id` is f32, i32, i64, bool or f16 (what
// element_layout moves).
Status require_movable(const Graph& graph, const Node& node, ValueId id);
// The dtype codes of shaders/cast.comp and friends: 0 f32, 1 i32, 2 i64,
// 3 bool; -1 for the rest.
int dtype_code(DType dtype);
// kUnsupported unless input `index` (when present) is `dtype`.
Status require_input(const Graph& graph, const Node& node, size_t index,
                     DType dtype);
// kUnsupported unless every output is `dtype`.
Status require_outputs(const Graph& graph, const Node& node, DType dtype);
// kUnsupported unless input `index` is absent or a constant (kernels read
// axes, pads and the like while recording).
Status require_constant(const Graph& graph, const Node& node, size_t index);
// kUnsupported unless input `index` (when present) is computed from
// constants and tensor dims alone (Shape, Size and arithmetic on them), so
// that the plan knows it for every binding of the graph's named dims and
// kernels that get their output dims from the plan need not read it.
Status require_shape_derived(const Graph& graph, const Node& node,
                             size_t index);
// Host parameters: a parameter input (a shape, starts, axes, repeats...)
// that is itself a graph input with at most this many elements. The
// executable reads its value on the host at run time and records (and
// caches) the command buffers for each value (executable.h), so kernels
// see it in NodeArgs::known_inputs like shape arithmetic.
inline constexpr int64_t kMaxHostParameterElements = 64;
// The inputs of `node` that its kernel reads while recording (parameters),
// by index; empty for ops without any.
const std::vector<size_t>& parameter_inputs(const Node& node);
// Whether value `id` may be a host parameter: a graph input (not a state),
// integer or f32, with at most kMaxHostParameterElements elements where
// its shape tells (a run checks the fed tensor).
bool is_host_parameter(const Graph& graph, ValueId id);
// kUnsupported unless input `index` is absent, computed from constants and
// dims (require_shape_derived), or a host parameter. A parameter made from
// data inside the graph is refused: the device would have to be read back
// in the middle of the recording.
Status require_host_known(const Graph& graph, const Node& node, size_t index);
// kUnsupported unless input `index` is absent, a constant, the output of a
// Constant node or a host parameter: integers (axes, pads) that
// constant_ints can read.
Status require_known_ints(const Graph& graph, const Node& node, size_t index);
// The integers of input `index` (as require_known_ints allows, a host
// parameter through NodeArgs::known_inputs), or `fallback` when it is
// absent.
std::vector<int64_t> constant_ints(const NodeArgs& args, size_t index,
                                   std::vector<int64_t> fallback = {});
// The default support rule (VulkanKernel::supports null): every present
// input and output is f32.
inline Status require_all_f32(const Graph& graph, const Node& node) {
  return require_f32(graph, node);
}
// Appends `values` padded to kMaxRank words.
void append_padded(std::vector<uint32_t>& words,
                   const std::vector<int64_t>& values, uint32_t pad);
std::vector<uint8_t> words_to_bytes(const std::vector<uint32_t>& words);

// kUnsupported when the output's rank is over kMaxRank (the generic
// broadcasting shaders: where, compare, bool_op).
Status require_output_rank_fits(const NodeArgs& args);
// kUnsupported unless value `id` is one of `allowed` (f32, i32, i64, then
// optionally bool and f16, as the message lists them).
Status require_dtype_in(const Graph& graph, const Node& node, ValueId id,
                        std::initializer_list<DType> allowed);
// kUnsupported unless value `id` is whole 32-bit words with a dtype code
// (f32, i32, i64).
Status require_words_dtype(const Graph& graph, const Node& node, ValueId id);
// 32-bit words of an index element (i64: 2, i32: 1).
uint32_t index_words(DType dtype);

}  // namespace seqrt::vulkan
