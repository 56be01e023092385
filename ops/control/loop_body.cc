#include "ops/control/loop_body.h"

#include <array>
#include <cstring>
#include <limits>
#include <optional>

#include "ops/control/subgraph.h"

namespace seqrt {
namespace {

// Bytes of a tensor of `dtype` and `dims`, or -1 when they are not valid
// dims of an allocatable tensor (the kernel's own allocation then fails
// with the proper error).
int64_t byte_count(DType dtype, const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t dim : dims) {
    if (dim < 0) return -1;
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / dim) {
      return -1;
    }
    count *= dim;
  }
  const int64_t size = static_cast<int64_t>(dtype_size(dtype));
  if (size == 0 || count > std::numeric_limits<int64_t>::max() / size) {
    return -1;
  }
  return count * size;
}

bool lies_in(const Tensor& tensor, const Tensor& buffer) {
  const char* at = static_cast<const char*>(tensor.data());
  const char* begin = static_cast<const char*>(buffer.data());
  return at != nullptr && at >= begin && at < begin + buffer.byte_size();
}

// The dims of the node's inputs (nullopt for an omitted one): what a
// kept body must have been prepared for.
using InputDims = std::vector<std::optional<std::vector<int64_t>>>;

InputDims input_dims(const KernelContext& ctx) {
  InputDims dims;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (ctx.has_input(i)) {
      dims.emplace_back(ctx.input(i)->dims());
    } else {
      dims.emplace_back(std::nullopt);
    }
  }
  return dims;
}

}  // namespace

struct LoopBody::State : public NodeState {
  using Buffers = std::array<std::shared_ptr<Tensor>, 2>;

  const Graph* body = nullptr;
  std::string attr;
  InputDims input_dims;
  std::unique_ptr<PreparedSubgraph> prepared;
  std::vector<int> output_index;  // by value id: body output, or -1
  std::vector<Buffers> buffers;   // by value id, made on first use

  // Drops the buffers that a tensor outside still views (the outputs of
  // the run that left this state): the next run must not write them.
  void drop_held_buffers() {
    for (Buffers& pair : buffers) {
      for (std::shared_ptr<Tensor>& buffer : pair) {
        if (buffer != nullptr && buffer.use_count() > 1) buffer.reset();
      }
    }
  }
};

LoopBody::LoopBody(const KernelContext& ctx, std::string attr,
                   const Graph& body)
    : ctx_(ctx), attr_(std::move(attr)), body_(body) {}

LoopBody::~LoopBody() {
  if (state_ != nullptr && ctx_.node_state() != nullptr) {
    ctx_.node_state()->give_back(std::move(state_));
  }
}

std::unique_ptr<LoopBody::State> LoopBody::take_kept_state() const {
  if (ctx_.node_state() == nullptr) return nullptr;
  std::unique_ptr<NodeState> kept = ctx_.node_state()->take();
  auto* state = dynamic_cast<State*>(kept.get());
  // Another body, or inputs of other dims: prepared again (what it kept
  // goes).
  if (state == nullptr || state->body != &body_ || state->attr != attr_ ||
      state->input_dims != input_dims(ctx_)) {
    return nullptr;
  }
  kept.release();
  std::unique_ptr<State> taken(state);
  taken->drop_held_buffers();
  return taken;
}

Status LoopBody::prepare() {
  if (!ctx_.prepare_subgraph()) return Status::ok();
  state_ = take_kept_state();
  reused_ = state_ != nullptr;
  if (state_ == nullptr) {
    Result<std::unique_ptr<PreparedSubgraph>> prepared =
        ctx_.prepare_subgraph()(body_);
    if (!prepared.is_ok()) {
      return prepared.status().with_context(
          fmt::format("{}: preparing '{}'", ctx_.node().label(), attr_));
    }
    auto state = std::make_unique<State>();
    state->body = &body_;
    state->attr = attr_;
    state->input_dims = input_dims(ctx_);
    state->prepared = std::move(prepared).value();
    state->output_index.assign(body_.values.size(), -1);
    for (size_t k = body_.outputs.size(); k-- > 0;) {
      state->output_index[body_.outputs[k]] = static_cast<int>(k);
    }
    state->buffers.resize(body_.values.size());
    state_ = std::move(state);
  }
  offered_.assign(body_.outputs.size(), Tensor());
  placer_ = [this](ValueId value, DType dtype,
                   const std::vector<int64_t>& dims) {
    return place(value, dtype, dims);
  };
  return Status::ok();
}

void LoopBody::offer_output(size_t index, Tensor slot) {
  if (state_ != nullptr) offered_[index] = std::move(slot);
}

Result<std::vector<Tensor>> LoopBody::run(std::vector<Tensor> inputs) {
  if (state_ == nullptr) return run_body(ctx_, attr_, body_, inputs);
  // Where the inputs start, for place() to keep their buffers out of
  // reach (the body run takes the handles themselves).
  input_data_.clear();
  for (const Tensor& input : inputs) input_data_.push_back(input.data());
  Result<std::vector<Tensor>> outputs =
      state_->prepared->run(std::move(inputs), ctx_.subgraph_scope(), &placer_);
  for (Tensor& slot : offered_) slot = Tensor();
  return finish_body_run(ctx_, attr_, body_, std::move(outputs));
}

Tensor LoopBody::keep(const Tensor& tensor) const {
  if (state_ == nullptr) return tensor;
  for (const State::Buffers& buffers : state_->buffers) {
    for (const std::shared_ptr<Tensor>& buffer : buffers) {
      if (buffer != nullptr && lies_in(tensor, *buffer)) return tensor.clone();
    }
  }
  return tensor;
}

bool LoopBody::read_by_this_run(const Tensor& buffer) const {
  const char* begin = static_cast<const char*>(buffer.data());
  for (const void* input : input_data_) {
    const char* at = static_cast<const char*>(input);
    if (at != nullptr && at >= begin && at < begin + buffer.byte_size()) {
      return true;
    }
  }
  return false;
}

Tensor LoopBody::place(ValueId value, DType dtype,
                       const std::vector<int64_t>& dims) {
  const int index = state_->output_index[value];
  if (index >= 0 && !offered_[index].empty()) {
    Tensor slot = std::move(offered_[index]);
    offered_[index] = Tensor();
    if (slot.dtype() == dtype && slot.dims() == dims) {
      std::memset(slot.mutable_data(), 0, slot.byte_size());
      return slot;
    }
  }
  const int64_t bytes = byte_count(dtype, dims);
  if (bytes <= 0) return Tensor();
  for (std::shared_ptr<Tensor>& buffer : state_->buffers[value]) {
    if (buffer != nullptr && read_by_this_run(*buffer)) continue;
    if (buffer == nullptr ||
        static_cast<int64_t>(buffer->byte_size()) < bytes) {
      Result<Tensor> storage = Tensor::allocate(DType::kU8, {bytes});
      if (!storage.is_ok()) return Tensor();
      buffer = std::make_shared<Tensor>(std::move(storage).value());
    }
    void* data = buffer->mutable_data();
    std::memset(data, 0, static_cast<size_t>(bytes));
    return Tensor::writable_view(dtype, dims, data, buffer);
  }
  return Tensor();
}

}  // namespace seqrt
