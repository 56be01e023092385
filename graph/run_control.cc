#include "graph/run_control.h"

#include <fmt/format.h>

#include "graph/shape.h"

namespace seqrt {
namespace {

thread_local const RunControl* current_control = nullptr;

// "2 s", "1.5 s", "250 ms".
std::string timeout_text(int64_t ms) {
  if (ms < 1000) return fmt::format("{} ms", ms);
  if (ms % 1000 == 0) return fmt::format("{} s", ms / 1000);
  return fmt::format("{:.3g} s", static_cast<double>(ms) / 1000.0);
}

}  // namespace

HeldBytes& HeldBytes::operator=(HeldBytes&& other) noexcept {
  if (this != &other) {
    reset();
    control_ = other.control_;
    bytes_ = other.bytes_;
    other.control_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

void HeldBytes::reset() {
  if (control_ != nullptr && bytes_ != 0) {
    control_->held_.fetch_sub(bytes_, std::memory_order_relaxed);
  }
  control_ = nullptr;
  bytes_ = 0;
}

RunControl::RunControl(const Limits& limits)
    : limits_(limits), started_(std::chrono::steady_clock::now()) {
  set_timeout_ms(limits.run_timeout_ms);
}

void RunControl::set_timeout_ms(int64_t timeout_ms) {
  timeout_ms_ = timeout_ms > 0 ? timeout_ms : 0;
  deadline_ = started_ + std::chrono::milliseconds(timeout_ms_);
}

void RunControl::watch_cancel(const std::atomic<uint64_t>* generation) {
  generation_ = generation;
  if (generation_ != nullptr) {
    start_generation_ = generation_->load(std::memory_order_acquire);
  }
}

bool RunControl::should_stop() const {
  if (generation_ != nullptr &&
      generation_->load(std::memory_order_relaxed) != start_generation_) {
    return true;
  }
  return timeout_ms_ > 0 && std::chrono::steady_clock::now() >= deadline_;
}

Status RunControl::check_stop(const std::string& where) const {
  if (generation_ != nullptr &&
      generation_->load(std::memory_order_acquire) != start_generation_) {
    return make_error(StatusCode::kCancelled, "run cancelled {}", where);
  }
  if (timeout_ms_ > 0 && std::chrono::steady_clock::now() >= deadline_) {
    return make_error(StatusCode::kDeadlineExceeded,
                      "deadline of {} exceeded {}; raise it with --timeout / "
                      "Limits::run_timeout_ms",
                      timeout_text(timeout_ms_), where);
  }
  return Status::ok();
}

Status RunControl::budget_error(const std::string& subject,
                                int64_t bytes) const {
  return limit_error(LimitKind::kMemoryBudgetBytes,
                     fmt::format("{} (with {} the run holds)", subject,
                                 format_bytes(planned_bytes_ + held_bytes())),
                     bytes, limits_.memory_budget_bytes);
}

Status RunControl::check_allocation(
    DType dtype, const std::vector<int64_t>& dims, bool runtime_sized,
    const std::function<std::string()>& subject) const {
  Result<int64_t> count = checked_num_elements(dims);
  if (!count.is_ok()) return count.status().with_context(subject());
  if (*count > limits_.max_tensor_elements) {
    return limit_error(
        LimitKind::kMaxTensorElements,
        fmt::format("{} of shape {}", subject(), dims_to_string(dims)), *count,
        limits_.max_tensor_elements);
  }
  // count <= kMaxElements (2^48) and elements are at most 8 bytes.
  const int64_t bytes =
      static_cast<int64_t>(dtype_bytes(dtype, static_cast<size_t>(*count)));
  if (bytes > limits_.max_tensor_bytes) {
    return limit_error(
        LimitKind::kMaxTensorBytes,
        fmt::format("{} of shape {}", subject(), dims_to_string(dims)), bytes,
        limits_.max_tensor_bytes);
  }
  const int64_t budget = limits_.memory_budget_bytes;
  if (budget <= 0) return Status::ok();
  const int64_t before = runtime_sized ? planned_bytes_ + held_bytes() : 0;
  if (bytes > budget - before) {
    return budget_error(
        fmt::format("{} of shape {}", subject(), dims_to_string(dims)), bytes);
  }
  return Status::ok();
}

Result<HeldBytes> RunControl::hold(
    int64_t bytes, const std::function<std::string()>& subject) const {
  const int64_t budget = limits_.memory_budget_bytes;
  if (budget > 0 && bytes > budget - planned_bytes_ - held_bytes()) {
    return budget_error(subject(), bytes);
  }
  held_.fetch_add(bytes, std::memory_order_relaxed);
  return HeldBytes(this, bytes);
}

const RunControl* RunControl::current() { return current_control; }

RunControl::Scope::Scope(const RunControl* control)
    : previous_(current_control) {
  current_control = control;
}

RunControl::Scope::~Scope() { current_control = previous_; }

Status check_run_allocation(DType dtype, const std::vector<int64_t>& dims,
                            bool runtime_sized,
                            const std::function<std::string()>& subject) {
  const RunControl* control = RunControl::current();
  if (control == nullptr) return Status::ok();
  return control->check_allocation(dtype, dims, runtime_sized, subject);
}

Status check_run_stop(const std::function<std::string()>& where) {
  const RunControl* control = RunControl::current();
  if (control == nullptr || !control->should_stop()) return Status::ok();
  return control->check_stop(where());
}

bool is_stopped_run(const Status& status) {
  return status.code() == StatusCode::kCancelled ||
         status.code() == StatusCode::kDeadlineExceeded;
}

}  // namespace seqrt
