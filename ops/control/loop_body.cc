#include "ops/control/loop_body.h"

#include <cstring>
#include <limits>

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

}  // namespace

Status LoopBody::prepare() {
  if (!ctx_.prepare_subgraph()) return Status::ok();
  Result<std::unique_ptr<PreparedSubgraph>> prepared =
      ctx_.prepare_subgraph()(body_);
  if (!prepared.is_ok()) {
    return prepared.status().with_context(
        fmt::format("{}: preparing '{}'", ctx_.node().label(), attr_));
  }
  prepared_ = std::move(prepared).value();
  output_index_.assign(body_.values.size(), -1);
  for (size_t k = body_.outputs.size(); k-- > 0;) {
    output_index_[body_.outputs[k]] = static_cast<int>(k);
  }
  offered_.resize(body_.outputs.size());
  buffers_.resize(body_.values.size());
  placer_ = [this](ValueId value, DType dtype,
                   const std::vector<int64_t>& dims) {
    return place(value, dtype, dims);
  };
  return Status::ok();
}

void LoopBody::offer_output(size_t index, Tensor slot) {
  if (prepared_ != nullptr) offered_[index] = std::move(slot);
}

Result<std::vector<Tensor>> LoopBody::run(std::vector<Tensor> inputs) {
  if (prepared_ == nullptr) return run_body(ctx_, attr_, body_, inputs);
  // Where the inputs start, for place() to keep their buffers out of
  // reach (the body run takes the handles themselves).
  input_data_.clear();
  for (const Tensor& input : inputs) input_data_.push_back(input.data());
  Result<std::vector<Tensor>> outputs =
      prepared_->run(std::move(inputs), &placer_);
  for (Tensor& slot : offered_) slot = Tensor();
  return finish_body_run(ctx_, attr_, body_, std::move(outputs));
}

Tensor LoopBody::keep(const Tensor& tensor) const {
  for (const Buffers& buffers : buffers_) {
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
  const int index = output_index_[value];
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
  for (std::shared_ptr<Tensor>& buffer : buffers_[value]) {
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
