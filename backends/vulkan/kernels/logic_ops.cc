// Ops around bools: And, Or, Xor, Not; Where (f32, i32, i64, bool and f16
// values); the comparisons Equal, Less, Greater, LessOrEqual,
// GreaterOrEqual (f32, i32, i64 into bool); Cast and CastLike between f32,
// i32, i64, bool and f16; IsNaN and IsInf (f32 into bool; f16 models
// reach them widened to f32, which keeps every NaN and infinity).
// Bools are bytes (dtype_size 1) and halves 2 bytes; the shaders read them
// out of 32-bit words and write whole words of 4 bools or 2 halves.
#include <map>

#include "backends/vulkan/kernels/kernel_util.h"

namespace seqrt::vulkan {
namespace {

// Op codes of shaders/compare.comp.
const std::map<std::string, uint32_t> kCompareOps = {{"Equal", 0},
                                                     {"Less", 1},
                                                     {"Greater", 2},
                                                     {"LessOrEqual", 3},
                                                     {"GreaterOrEqual", 4}};

Status rank_ok(const NodeArgs& args) {
  if (args.output_dims[0].size() > kMaxRank) {
    return unsupported("{}: rank {} is over the Vulkan kernel's {}",
                       args.node->label(), args.output_dims[0].size(),
                       kMaxRank);
  }
  return Status::ok();
}

Status record_where(const NodeArgs& args, Recorder& recorder) {
  SEQRT_RETURN_IF_ERROR(rank_ok(args));
  const std::vector<int64_t>& out = args.output_dims[0];
  int64_t count = element_count(out);
  std::vector<uint32_t> words = {static_cast<uint32_t>(count),
                                 static_cast<uint32_t>(out.size())};
  append_padded(words, out, 1);
  for (int i = 0; i < 3; ++i) {
    append_padded(words, broadcast_strides(args.input_dims[i], out), 0);
  }
  const ElementLayout layout = element_layout(args.output_dtypes[0]);
  const int64_t per_invocation = layout.per_invocation();
  Dispatch dispatch;
  dispatch.shader = "where";
  dispatch.specialization = {kLocalSize, layout.words, layout.part_bytes};
  dispatch.push_constants = words_to_bytes(words);
  dispatch.reads = {args.inputs[0], args.inputs[1], args.inputs[2]};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = groups_for((count + per_invocation - 1) / per_invocation,
                               recorder.limits());
  return recorder.dispatch(dispatch);
}

Status record_compare(uint32_t code, const NodeArgs& args, Recorder& recorder) {
  SEQRT_RETURN_IF_ERROR(rank_ok(args));
  const std::vector<int64_t>& out = args.output_dims[0];
  int64_t count = element_count(out);
  std::vector<uint32_t> words = {static_cast<uint32_t>(count),
                                 static_cast<uint32_t>(out.size())};
  append_padded(words, out, 1);
  append_padded(words, broadcast_strides(args.input_dims[0], out), 0);
  append_padded(words, broadcast_strides(args.input_dims[1], out), 0);
  Dispatch dispatch;
  dispatch.shader = "compare";
  dispatch.specialization = {
      kLocalSize, code,
      static_cast<uint32_t>(dtype_code(args.input_dtypes[0]))};
  dispatch.push_constants = words_to_bytes(words);
  dispatch.reads = {args.inputs[0], args.inputs[1]};
  dispatch.writes = {args.outputs[0]};
  // One invocation per output word of 4 bools.
  dispatch.groups = groups_for((count + 3) / 4, recorder.limits());
  return recorder.dispatch(dispatch);
}

// shaders/cast.comp's dtype codes: dtype_code's, and 4 for f16.
uint32_t cast_code(DType dtype) {
  return dtype == DType::kF16 ? 4u : static_cast<uint32_t>(dtype_code(dtype));
}

Status record_cast(const NodeArgs& args, Recorder& recorder) {
  int64_t count = element_count(args.output_dims[0]);
  uint32_t to = cast_code(args.output_dtypes[0]);
  // Bools are written 4 to a word, halves 2.
  int64_t per_word = to == 3 ? 4 : to == 4 ? 2 : 1;
  Dispatch dispatch;
  dispatch.shader = "cast";
  dispatch.specialization = {kLocalSize, cast_code(args.input_dtypes[0]), to};
  dispatch.push_constants = push_bytes({static_cast<uint32_t>(count)});
  dispatch.reads = {args.inputs[0]};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups =
      groups_for((count + per_word - 1) / per_word, recorder.limits());
  if (count == 0) return Status::ok();
  return recorder.dispatch(dispatch);
}

// And, Or, Xor, Not (code 3: input 0 stands in for the absent b).
Status record_bool_op(uint32_t code, const NodeArgs& args, Recorder& recorder) {
  SEQRT_RETURN_IF_ERROR(rank_ok(args));
  const std::vector<int64_t>& out = args.output_dims[0];
  int64_t count = element_count(out);
  size_t b = args.inputs.size() > 1 ? 1 : 0;
  std::vector<uint32_t> words = {static_cast<uint32_t>(count),
                                 static_cast<uint32_t>(out.size())};
  append_padded(words, out, 1);
  append_padded(words, broadcast_strides(args.input_dims[0], out), 0);
  append_padded(words, broadcast_strides(args.input_dims[b], out), 0);
  Dispatch dispatch;
  dispatch.shader = "bool_ops";
  dispatch.specialization = {kLocalSize, code};
  dispatch.push_constants = words_to_bytes(words);
  dispatch.reads = {args.inputs[0], args.inputs[b]};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = groups_for((count + 3) / 4, recorder.limits());
  return recorder.dispatch(dispatch);
}

// IsNaN (code 0) and IsInf (code 1) by shaders/float_class.comp.
Status record_float_class(uint32_t code, const NodeArgs& args,
                          Recorder& recorder) {
  const int64_t count = element_count(args.output_dims[0]);
  const Node& node = *args.node;
  Dispatch dispatch;
  dispatch.shader = "float_class";
  dispatch.specialization = {kLocalSize, code};
  dispatch.push_constants = push_bytes(
      {static_cast<uint32_t>(count),
       static_cast<uint32_t>(int_attr(node, "detect_negative", 1) != 0),
       static_cast<uint32_t>(int_attr(node, "detect_positive", 1) != 0)});
  dispatch.reads = {args.inputs[0]};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = groups_for((count + 3) / 4, recorder.limits());
  if (count == 0) return Status::ok();
  return recorder.dispatch(dispatch);
}

Status supports_float_class(const Graph& graph, const Node& node,
                            const DeviceLimits&) {
  return require_input(graph, node, 0, DType::kF32);
}

Status supports_bool_op(const Graph& graph, const Node& node,
                        const DeviceLimits&) {
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    SEQRT_RETURN_IF_ERROR(require_input(graph, node, i, DType::kBool));
  }
  return require_outputs(graph, node, DType::kBool);
}

Status dtype_in(const Graph& graph, const Node& node, ValueId id,
                std::initializer_list<DType> allowed) {
  DType dtype = graph.value(id).dtype;
  for (DType d : allowed) {
    if (d == dtype) return Status::ok();
  }
  return unsupported("{}: '{}' is {}; the Vulkan kernel takes f32, i32, i64{}",
                     node.label(), graph.value(id).name, dtype_name(dtype),
                     allowed.size() > 4   ? ", bool or f16"
                     : allowed.size() > 3 ? " or bool"
                                          : "");
}

Status supports_where(const Graph& graph, const Node& node,
                      const DeviceLimits&) {
  SEQRT_RETURN_IF_ERROR(require_input(graph, node, 0, DType::kBool));
  return require_movable(graph, node, node.outputs[0]);
}

Status supports_compare(const Graph& graph, const Node& node,
                        const DeviceLimits&) {
  SEQRT_RETURN_IF_ERROR(require_outputs(graph, node, DType::kBool));
  return dtype_in(graph, node, node.inputs[0],
                  {DType::kF32, DType::kI32, DType::kI64});
}

Status supports_cast(const Graph& graph, const Node& node,
                     const DeviceLimits&) {
  std::initializer_list<DType> allowed = {DType::kF32, DType::kI32, DType::kI64,
                                          DType::kBool, DType::kF16};
  SEQRT_RETURN_IF_ERROR(dtype_in(graph, node, node.inputs[0], allowed));
  return dtype_in(graph, node, node.outputs[0], allowed);
}

}  // namespace

void register_logic_ops_kernels(KernelTable& table) {
  table.add({kOnnxDomain, "Where", supports_where, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_where(args, r);
             }});
  for (const auto& [op, code] : kCompareOps) {
    uint32_t c = code;
    table.add({kOnnxDomain, op, supports_compare, nullptr,
               [c](const NodeArgs& args, const KernelTiling&, Recorder& r) {
                 return record_compare(c, args, r);
               }});
  }
  const std::pair<const char*, uint32_t> bool_ops[] = {
      {"And", 0}, {"Or", 1}, {"Xor", 2}, {"Not", 3}};
  for (const auto& [op, code] : bool_ops) {
    uint32_t c = code;
    table.add({kOnnxDomain, op, supports_bool_op, nullptr,
               [c](const NodeArgs& args, const KernelTiling&, Recorder& r) {
                 return record_bool_op(c, args, r);
               }});
  }
  const std::pair<const char*, uint32_t> float_classes[] = {{"IsNaN", 0},
                                                            {"IsInf", 1}};
  for (const auto& [op, code] : float_classes) {
    uint32_t c = code;
    table.add({kOnnxDomain, op, supports_float_class, nullptr,
               [c](const NodeArgs& args, const KernelTiling&, Recorder& r) {
                 return record_float_class(c, args, r);
               }});
  }
  // CastLike takes its target dtype from input 1, which it never reads.
  for (const char* op : {"Cast", "CastLike"}) {
    table.add({kOnnxDomain, op, supports_cast, nullptr,
               [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
                 return record_cast(args, r);
               }});
  }
}

}  // namespace seqrt::vulkan
