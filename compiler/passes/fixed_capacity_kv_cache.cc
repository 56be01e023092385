#include "compiler/passes/fixed_capacity_kv_cache.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "compiler/infer/infer_graph.h"
#include "compiler/passes/rewrite.h"
#include "ops/sequence/attention.h"

namespace seqrt {
namespace {

constexpr int64_t kTimeAxis = 2;

bool is_seqrt_attention(const Node& node) {
  return node.op == "Attention" && node.domain == kSeqrtDomain;
}

// The state pair whose input is `id`, or null.
const StatePair* pair_of_input(const Graph& graph, ValueId id) {
  for (const StatePair& pair : graph.state_pairs) {
    if (pair.input == id) return &pair;
  }
  return nullptr;
}

// One attention node reading a cache pair for its keys and its values.
struct CacheAttention {
  int node = -1;
  const StatePair* key = nullptr;
  const StatePair* value = nullptr;
};

class Rewriter {
 public:
  Rewriter(const Graph& graph, int64_t capacity)
      : source_(graph), capacity_(capacity), uses_(compute_uses(graph)) {}

  Result<KvCacheRewrite> run();

 private:
  Status error(const std::string& why) const {
    return unsupported(
        "graph '{}' has no KV cache the fixed-capacity form can hold: {}",
        source_.name, why);
  }
  // Finds the attentions and checks every reader of their caches.
  Status find_caches();
  Status check_cache(const CacheAttention& use, const StatePair& pair,
                     size_t past_input, size_t present_output);
  Status check_mask(const Node& attention) const;

  // Node builders on `graph_`; each returns its output.
  ValueId add(const std::string& op, std::vector<ValueId> inputs, AttrMap attrs,
              const std::string& name);
  ValueId shape_slice(ValueId of, int64_t start, int64_t end,
                      const std::string& name);
  ValueId constant_i64(std::vector<int64_t> values, const std::string& name);

  // Whether `id` is computed from a read of a cache's time axis.
  bool reads_cache_length(ValueId id) const;
  // Slices of a mask cut to the keys' count (HF's mask[..., :keys]) keep
  // all its keys: C in the fixed-capacity form.
  Status widen_mask_slices();
  void add_length_state();
  void resize_caches();
  Status rebase_shape_reads();
  Status rewrite_attentions();

  const Graph& source_;
  const int64_t capacity_;
  const ValueUses uses_;
  std::vector<CacheAttention> attentions_;
  std::set<ValueId> caches_;      // the cache state inputs
  std::vector<int> shape_reads_;  // Shape nodes reading a cache
  std::set<int> rebased_;         // those that read its time axis
  std::set<int> widened_;         // mask Slices that keep every key
  Dim past_dim_;
  Graph graph_;
  std::vector<Node> added_;  // built nodes, placed by replace_nodes
  ValueId length_ = kNoValue;
  ValueId length_row_ = kNoValue;  // (1): L as a shape element
};

Status Rewriter::check_cache(const CacheAttention& use, const StatePair& pair,
                             size_t past_input, size_t present_output) {
  const Node& node = source_.nodes[use.node];
  const Value& past = source_.value(pair.input);
  if (node.outputs.size() <= present_output ||
      node.outputs[present_output] != pair.output) {
    return error(
        fmt::format("{} reads state '{}' but does not return its pair '{}'",
                    node.label(), past.name, source_.value(pair.output).name));
  }
  if (!uses_.consumers[pair.output].empty()) {
    return error(fmt::format("state output '{}' is also read by the graph",
                             source_.value(pair.output).name));
  }
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == pair.input && i != past_input) {
      return error(fmt::format("{} reads state '{}' as input {}", node.label(),
                               past.name, i));
    }
  }
  if (!past.shape || past.shape->rank() != 4 ||
      !(*past.shape)[kTimeAxis].is_symbol()) {
    return error(fmt::format(
        "state '{}' is not (B,H,past,d) with a symbolic past, it is {}",
        past.name, past.shape ? past.shape->to_string() : "of unknown rank"));
  }
  const Dim& time = (*past.shape)[kTimeAxis];
  if (past_dim_.is_unknown()) past_dim_ = time;
  if (time != past_dim_) {
    return error(fmt::format("caches disagree on their length: {} and {}",
                             past_dim_.to_string(), time.to_string()));
  }
  if (pair.initial && pair.initial->num_elements() != 0) {
    return error(
        fmt::format("state '{}' starts from a non-empty value", past.name));
  }
  return Status::ok();
}

Status Rewriter::check_mask(const Node& attention) const {
  if (attention.inputs.size() <= kAttnMask ||
      attention.inputs[kAttnMask] == kNoValue) {
    return Status::ok();
  }
  const Value& mask = source_.value(attention.inputs[kAttnMask]);
  if (!mask.shape || mask.shape->rank() == 0) {
    return error(
        fmt::format("the mask of {} has no known rank", attention.label()));
  }
  const Dim& keys = (*mask.shape)[mask.shape->rank() - 1];
  if (keys.is_fixed() && keys.value() != 1) {
    return error(fmt::format(
        "the mask of {} spans a fixed {} keys, which cannot grow to the "
        "capacity",
        attention.label(), keys.value()));
  }
  return Status::ok();
}

Status Rewriter::find_caches() {
  for (size_t n = 0; n < source_.nodes.size(); ++n) {
    const Node& node = source_.nodes[n];
    if (!is_seqrt_attention(node) || node.inputs.size() <= kAttnPastValue) {
      continue;
    }
    CacheAttention use;
    use.node = static_cast<int>(n);
    use.key = pair_of_input(source_, node.inputs[kAttnPastKey]);
    use.value = pair_of_input(source_, node.inputs[kAttnPastValue]);
    if (use.key == nullptr && use.value == nullptr) continue;
    if (use.key == nullptr || use.value == nullptr) {
      return error(fmt::format(
          "{} reads only one of past_key/past_value from a state pair",
          node.label()));
    }
    if (node.inputs.size() > kAttnNonpadKvSeqlen &&
        node.inputs[kAttnNonpadKvSeqlen] != kNoValue) {
      return error(
          fmt::format("{} already has nonpad_kv_seqlen", node.label()));
    }
    SEQRT_RETURN_IF_ERROR(
        check_cache(use, *use.key, kAttnPastKey, kAttnPresentKey));
    SEQRT_RETURN_IF_ERROR(
        check_cache(use, *use.value, kAttnPastValue, kAttnPresentValue));
    SEQRT_RETURN_IF_ERROR(check_mask(node));
    caches_.insert(use.key->input);
    caches_.insert(use.value->input);
    attentions_.push_back(use);
  }
  if (attentions_.empty()) {
    return error(
        "no seqrt::Attention reads its past_key/past_value from state pairs "
        "(run the default passes first, or the attention did not fuse)");
  }
  for (ValueId cache : caches_) {
    for (int reader : uses_.consumers[cache]) {
      const Node& node = source_.nodes[reader];
      if (node.op == "Shape" && node.domain.empty()) {
        shape_reads_.push_back(reader);
      } else if (!is_seqrt_attention(node)) {
        return error(fmt::format("state '{}' is also read by {}",
                                 source_.value(cache).name, node.label()));
      }
    }
  }
  return Status::ok();
}

ValueId Rewriter::add(const std::string& op, std::vector<ValueId> inputs,
                      AttrMap attrs, const std::string& name) {
  Node node;
  node.name = name;
  node.op = op;
  node.inputs = std::move(inputs);
  node.attrs = std::move(attrs);
  node.outputs = {add_fresh_value(graph_, name)};
  added_.push_back(std::move(node));
  return added_.back().outputs[0];
}

ValueId Rewriter::shape_slice(ValueId of, int64_t start, int64_t end,
                              const std::string& name) {
  return add("Shape", {of},
             {{"start", Attribute(start)}, {"end", Attribute(end)}}, name);
}

ValueId Rewriter::constant_i64(std::vector<int64_t> values,
                               const std::string& name) {
  ValueId id = add_fresh_value(graph_, name);
  const int64_t n = static_cast<int64_t>(values.size());
  graph_.constants[id] = Tensor::from_vector<int64_t>({n}, std::move(values));
  graph_.value(id).dtype = DType::kI64;
  graph_.value(id).shape = Shape({n});
  return id;
}

void Rewriter::add_length_state() {
  length_ = add_fresh_value(graph_, kKvLengthInput);
  graph_.value(length_).dtype = DType::kI64;
  graph_.value(length_).shape = Shape();
  graph_.inputs.push_back(length_);
  ValueId axes = constant_i64({0}, "kv_axes0");
  length_row_ = add("Unsqueeze", {length_, axes}, {}, "kv_length_row");
  // L + Tk, with Tk read from the first attention's new keys.
  const Node& first = source_.nodes[attentions_.front().node];
  ValueId new_tokens =
      shape_slice(first.inputs[kAttnK], kTimeAxis, kTimeAxis + 1, "kv_new");
  ValueId next = add("Add", {length_row_, new_tokens}, {}, "kv_length_sum");
  ValueId scalar = add("Squeeze", {next, axes}, {}, kKvLengthOutput);
  graph_.outputs.push_back(scalar);
  graph_.state_pairs.push_back(
      StatePair{length_, scalar, Tensor::scalar<int64_t>(0)});
}

void Rewriter::resize_caches() {
  for (ValueId cache : caches_) {
    (*graph_.value(cache).shape)[kTimeAxis] = Dim(capacity_);
  }
  // An empty initial cache becomes zeros of the capacity.
  for (StatePair& pair : graph_.state_pairs) {
    if (caches_.count(pair.input) != 0) pair.initial.reset();
  }
}

// Shape(cache)[start:end] with the time element read from L: the export's
// position arithmetic (Range(past, past + seq)) then counts cached tokens,
// not the capacity.
Status Rewriter::rebase_shape_reads() {
  for (int n : shape_reads_) {
    const Node& node = source_.nodes[n];
    auto bound = [&](const char* name, int64_t fallback) {
      const Attribute* a = node.attr(name);
      int64_t v = a == nullptr ? fallback : a->as_int();
      if (v < 0) v += 4;
      return std::min<int64_t>(std::max<int64_t>(v, 0), 4);
    };
    const int64_t start = bound("start", 0), end = bound("end", 4);
    if (start > kTimeAxis || end <= kTimeAxis) continue;  // time not read
    rebased_.insert(n);
    std::vector<ValueId> parts;
    const std::string base = node.name.empty() ? "cache_shape" : node.name;
    if (start < kTimeAxis) {
      parts.push_back(
          shape_slice(node.inputs[0], start, kTimeAxis, base + "_lead"));
    }
    parts.push_back(length_row_);
    if (end > kTimeAxis + 1) {
      parts.push_back(
          shape_slice(node.inputs[0], kTimeAxis + 1, end, base + "_trail"));
    }
    Node concat;
    concat.name = base + "_cached";
    concat.op = "Concat";
    concat.inputs = parts;
    concat.attrs = {{"axis", Attribute(int64_t{0})}};
    concat.outputs = node.outputs;
    added_.push_back(std::move(concat));
  }
  return Status::ok();
}

Status Rewriter::rewrite_attentions() {
  const Node& first = source_.nodes[attentions_.front().node];
  ValueId batch = shape_slice(first.inputs[kAttnPastKey], 0, 1, "kv_batch");
  ValueId write_at = add("Expand", {length_, batch}, {}, "kv_write_indices");
  for (const CacheAttention& use : attentions_) {
    const Node& node = source_.nodes[use.node];
    const std::string base =
        node.name.empty() ? fmt::format("attention{}", use.node) : node.name;
    ValueId fresh = shape_slice(node.inputs[kAttnK], kTimeAxis, kTimeAxis + 1,
                                base + "_new_keys");
    ValueId valid = add("Add", {write_at, fresh}, {}, base + "_valid_keys");
    ValueId caches[2];
    const size_t news[2] = {kAttnK, kAttnV};
    const StatePair* pairs[2] = {use.key, use.value};
    for (int c = 0; c < 2; ++c) {
      Node scatter;
      scatter.name = base + (c == 0 ? "_write_keys" : "_write_values");
      scatter.op = "TensorScatter";
      scatter.inputs = {pairs[c]->input, node.inputs[news[c]], write_at};
      scatter.attrs = {{"axis", Attribute(kTimeAxis)}};
      scatter.outputs = {pairs[c]->output};
      added_.push_back(std::move(scatter));
      caches[c] = pairs[c]->output;
    }
    Node attention = node;
    attention.inputs.resize(kAttnCount, kNoValue);
    attention.inputs[kAttnK] = caches[0];
    attention.inputs[kAttnV] = caches[1];
    attention.inputs[kAttnPastKey] = kNoValue;
    attention.inputs[kAttnPastValue] = kNoValue;
    attention.inputs[kAttnNonpadKvSeqlen] = valid;
    attention.outputs.resize(1);
    added_.push_back(std::move(attention));
  }
  return Status::ok();
}

bool Rewriter::reads_cache_length(ValueId id) const {
  std::vector<ValueId> pending = {id};
  std::set<ValueId> seen;
  while (!pending.empty() && seen.size() < 256) {
    ValueId v = pending.back();
    pending.pop_back();
    if (v == kNoValue || !seen.insert(v).second) continue;
    const int producer = uses_.producer[v];
    if (producer < 0) continue;
    if (std::count(shape_reads_.begin(), shape_reads_.end(), producer) != 0) {
      return true;
    }
    for (ValueId input : source_.nodes[producer].inputs) {
      pending.push_back(input);
    }
  }
  return false;
}

Status Rewriter::widen_mask_slices() {
  for (const CacheAttention& use : attentions_) {
    const Node& attention = source_.nodes[use.node];
    if (attention.inputs.size() <= kAttnMask) continue;
    ValueId v = attention.inputs[kAttnMask];
    // Back along the mask's data, through its casts, wheres and expands.
    for (int hop = 0; hop < 16 && v != kNoValue; ++hop) {
      const int producer = uses_.producer[v];
      if (producer < 0) break;
      const Node& node = source_.nodes[producer];
      if (node.op == "Slice" && node.domain.empty() && node.inputs.size() > 2 &&
          reads_cache_length(node.inputs[2])) {
        const Value& ends = source_.value(node.inputs[2]);
        if (!ends.shape || ends.shape->rank() != 1 ||
            !(*ends.shape)[0].is_fixed() || (*ends.shape)[0].value() != 1) {
          return error(fmt::format(
              "{} cuts the mask of {} to the keys' count along several axes",
              node.label(), attention.label()));
        }
        if (widened_.insert(producer).second) {
          Node wide = node;
          wide.inputs[2] = constant_i64({std::numeric_limits<int64_t>::max()},
                                        "mask_keys_end");
          added_.push_back(std::move(wide));
        }
      }
      v = node.inputs.empty() ? kNoValue : node.inputs[0];
    }
  }
  return Status::ok();
}

Result<KvCacheRewrite> Rewriter::run() {
  if (capacity_ <= 0) {
    return invalid_argument("the KV cache capacity must be positive, got {}",
                            capacity_);
  }
  for (const Value& value : source_.values) {
    if (value.name == kKvLengthInput || value.name == kKvLengthOutput) {
      return error(
          fmt::format("it already has a value named '{}'", value.name));
    }
  }
  SEQRT_RETURN_IF_ERROR(find_caches());
  graph_ = source_;
  add_length_state();
  resize_caches();
  SEQRT_RETURN_IF_ERROR(rebase_shape_reads());
  SEQRT_RETURN_IF_ERROR(widen_mask_slices());
  SEQRT_RETURN_IF_ERROR(rewrite_attentions());
  std::set<int> removed = rebased_;
  removed.insert(widened_.begin(), widened_.end());
  for (const CacheAttention& use : attentions_) removed.insert(use.node);
  SEQRT_RETURN_IF_ERROR(replace_nodes(graph_, removed, std::move(added_)));

  KvCacheRewrite out;
  out.capacity = capacity_;
  for (ValueId cache : caches_) {
    out.cache_inputs.push_back(source_.value(cache).name);
  }
  for (ValueId id : source_.inputs) {
    const Value& value = source_.value(id);
    if (value.name == kPaddedMaskInput && value.shape &&
        value.shape->rank() == 2) {
      out.padded_inputs.push_back(value.name);
      // Fed at the capacity: its keys axis is C from now on.
      ValueId mine = kNoValue;
      for (ValueId own : graph_.inputs) {
        if (graph_.value(own).name == value.name) mine = own;
      }
      (*graph_.value(mine).shape)[1] = Dim(capacity_);
    }
  }
  const Value& keys =
      source_.value(source_.nodes[attentions_.front().node].inputs[kAttnK]);
  if (keys.shape && keys.shape->rank() == 4) {
    out.new_tokens = (*keys.shape)[kTimeAxis];
  }
  // Every computed value is typed again: the caches' new length flows on.
  std::set<ValueId> declared(graph_.inputs.begin(), graph_.inputs.end());
  for (const auto& [id, tensor] : graph_.constants) declared.insert(id);
  for (ValueId id = 0; id < static_cast<ValueId>(graph_.values.size()); ++id) {
    if (declared.count(id) != 0) continue;
    graph_.value(id).shape.reset();
    graph_.value(id).dtype = DType::kUndefined;
  }
  Status typed = infer_graph(graph_);
  if (!typed.is_ok()) {
    return typed.with_context(fmt::format(
        "graph '{}' with a KV cache of {} tokens", source_.name, capacity_));
  }
  out.graph = std::move(graph_);
  return out;
}

}  // namespace

Result<KvCacheRewrite> fixed_capacity_kv_cache(const Graph& graph,
                                               int64_t capacity) {
  return Rewriter(graph, capacity).run();
}

}  // namespace seqrt
