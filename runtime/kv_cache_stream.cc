#include "runtime/kv_cache_stream.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "runtime/stream.h"

namespace seqrt {
namespace {

constexpr size_t kTimeAxis = 2;

// Copies the first `rows` steps of each (B,H) slab of the 4-D `from` into
// `to`, both time-major per slab: a cache cut to its length or widened to
// the capacity.
void copy_time_rows(const Tensor& from, Tensor& to, int64_t rows) {
  if (rows == 0 || to.num_elements() == 0) return;  // no data pointers
  const int64_t slabs = from.dim(0) * from.dim(1);
  const size_t row =
      static_cast<size_t>(from.dim(3)) * dtype_size(from.dtype());
  const auto* src = static_cast<const uint8_t*>(from.data());
  auto* dst = static_cast<uint8_t*>(to.mutable_data());
  for (int64_t s = 0; s < slabs; ++s) {
    std::memcpy(dst + s * to.dim(kTimeAxis) * row,
                src + s * from.dim(kTimeAxis) * row,
                static_cast<size_t>(rows) * row);
  }
}

Result<Tensor> resized_cache(const Tensor& cache, int64_t time, int64_t rows) {
  std::vector<int64_t> dims = cache.dims();
  dims[kTimeAxis] = time;
  SEQRT_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(cache.dtype(), dims));
  copy_time_rows(cache, out, rows);
  return out;
}

}  // namespace

KvCacheStream::KvCacheStream(const Session& session,
                             const Session& cache_session,
                             const KvCacheRewrite& form)
    : session_(session),
      form_(form),
      steps_(std::make_unique<Stream>(cache_session)) {
  steps_->set_update_state_in_place(true);
}

KvCacheStream::~KvCacheStream() = default;

bool KvCacheStream::is_cache(const std::string& name) const {
  return std::find(form_.cache_inputs.begin(), form_.cache_inputs.end(),
                   name) != form_.cache_inputs.end();
}

Result<int64_t> KvCacheStream::new_tokens(
    const std::map<std::string, Tensor>& feeds) const {
  if (form_.new_tokens.is_fixed()) return form_.new_tokens.value();
  if (form_.new_tokens.is_symbol()) {
    std::map<std::string, int64_t> symbols =
        symbols_from_feeds(session_.graph(), feeds);
    auto it = symbols.find(form_.new_tokens.symbol_name());
    if (it != symbols.end()) return it->second;
  }
  return invalid_argument(
      "graph '{}': the feeds do not say how many tokens this step adds (the "
      "'{}' dim of the attention's keys)",
      session_.graph().name, form_.new_tokens.to_string());
}

Result<std::map<std::string, Tensor>> KvCacheStream::run(
    const std::map<std::string, Tensor>& feeds,
    const SessionRunOptions& run_options) {
  std::map<std::string, Tensor> step, fed_state;
  for (const auto& [name, tensor] : feeds) {
    bool is_state = false;
    for (const StatePair& pair : session_.graph().state_pairs) {
      is_state |= session_.graph().value(pair.input).name == name;
    }
    (is_state ? fed_state : step)[name] = tensor;
  }
  if (!fed_state.empty()) {
    // A fed state replaces the held one from this step on.
    std::map<std::string, Tensor> state = snapshot();
    for (auto& [name, tensor] : fed_state) state[name] = std::move(tensor);
    SEQRT_RETURN_IF_ERROR(restore(std::move(state)));
  }
  SEQRT_ASSIGN_OR_RETURN(int64_t fresh, new_tokens(step));
  if (length_ + fresh > form_.capacity) {
    return invalid_argument(
        "graph '{}': the KV cache is full: it holds {} tokens "
        "(kv_cache_capacity), {} are cached and this step adds {}; start a "
        "new Stream or raise the capacity",
        session_.graph().name, form_.capacity, length_, fresh);
  }
  for (const std::string& name : form_.padded_inputs) {
    auto it = step.find(name);
    if (it == step.end()) continue;  // the run names the missing input
    const Tensor& mask = it->second;
    if (mask.rank() != 2 || mask.dim(1) != length_ + fresh) {
      return invalid_argument(
          "graph '{}': input '{}' must be (batch, {}): the {} cached and {} "
          "new tokens; got {}",
          session_.graph().name, name, length_ + fresh, length_, fresh,
          dims_to_string(mask.dims()));
    }
    SEQRT_ASSIGN_OR_RETURN(
        Tensor padded,
        Tensor::allocate(mask.dtype(), {mask.dim(0), form_.capacity}));
    const size_t row =
        static_cast<size_t>(mask.dim(1)) * dtype_size(mask.dtype());
    for (int64_t b = 0; b < mask.dim(0); ++b) {
      std::memcpy(static_cast<uint8_t*>(padded.mutable_data()) +
                      b * form_.capacity * dtype_size(mask.dtype()),
                  static_cast<const uint8_t*>(mask.data()) + b * row, row);
    }
    it->second = std::move(padded);
  }
  Result<std::map<std::string, Tensor>> outputs =
      steps_->run(step, run_options);
  if (!outputs.is_ok()) {
    // The in-place steps reset their state when a started run fails.
    if (steps_->snapshot().empty()) length_ = 0;
    return outputs.status();
  }
  length_ += fresh;
  return outputs;
}

std::map<std::string, Tensor> KvCacheStream::to_graph_form(
    std::map<std::string, Tensor> state) const {
  std::map<std::string, Tensor> out;
  for (auto& [name, tensor] : state) {
    if (name == kKvLengthInput) continue;
    if (is_cache(name)) {
      Result<Tensor> cut = resized_cache(tensor, length_, length_);
      if (!cut.is_ok()) return {};
      out[name] = std::move(cut).value();
    } else {
      out[name] = std::move(tensor);
    }
  }
  return out;
}

std::map<std::string, Tensor> KvCacheStream::snapshot() const {
  return to_graph_form(steps_->snapshot());
}

Result<std::map<std::string, Tensor>> KvCacheStream::read_snapshot() const {
  Result<std::map<std::string, Tensor>> state = steps_->read_snapshot();
  if (!state.is_ok()) return state.status();
  return to_graph_form(std::move(state).value());
}

Status KvCacheStream::restore(std::map<std::string, Tensor> state) {
  const Graph& graph = session_.graph();
  int64_t length = -1;
  size_t caches = 0;
  for (const auto& [name, tensor] : state) {
    bool is_state = false;
    for (const StatePair& pair : graph.state_pairs) {
      is_state |= graph.value(pair.input).name == name;
    }
    if (!is_state) {
      return invalid_argument("'{}' is not a state input of graph '{}'", name,
                              graph.name);
    }
    if (!is_cache(name)) continue;
    ++caches;
    if (tensor.rank() != 4) {
      return invalid_argument("state '{}' must have rank 4, got {}", name,
                              dims_to_string(tensor.dims()));
    }
    if (length >= 0 && tensor.dim(kTimeAxis) != length) {
      return invalid_argument(
          "the KV caches of a restored state must hold the same number of "
          "tokens; '{}' holds {}, another {}",
          name, tensor.dim(kTimeAxis), length);
    }
    length = tensor.dim(kTimeAxis);
  }
  if (caches != 0 && caches != form_.cache_inputs.size()) {
    return invalid_argument(
        "a restored state of graph '{}' must hold all {} KV caches or none; "
        "it holds {}",
        graph.name, form_.cache_inputs.size(), caches);
  }
  length = std::max<int64_t>(length, 0);
  if (length > form_.capacity) {
    return invalid_argument(
        "the restored KV caches hold {} tokens, above kv_cache_capacity {}",
        length, form_.capacity);
  }
  std::map<std::string, Tensor> converted;
  for (auto& [name, tensor] : state) {
    if (is_cache(name)) {
      SEQRT_ASSIGN_OR_RETURN(converted[name],
                             resized_cache(tensor, form_.capacity, length));
    } else {
      converted[name] = std::move(tensor);
    }
  }
  converted[kKvLengthInput] = Tensor::scalar<int64_t>(length);
  SEQRT_RETURN_IF_ERROR(steps_->restore(std::move(converted)));
  length_ = length;
  return Status::ok();
}

void KvCacheStream::reset() {
  steps_->reset();
  length_ = 0;
}

}  // namespace seqrt
