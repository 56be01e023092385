// What bounds one run besides its inputs: the tensor limits and the memory
// budget (graph/limits.h) checked at every allocation, shapes computed at
// run time included; a deadline (Limits::run_timeout_ms); and a cancel
// flag another thread may raise (Session::cancel).
//
// A Session makes one RunControl per run and installs it on the thread
// that runs it (RunControl::Scope); the interpreter, the Loop and Scan
// kernels, KernelContext::allocate_output (through the interpreter) and
// Tensor::allocate find it with current(). A thread-local keeps it off the
// backend interface (STYLE.md rule 3): every backend runs a graph on the
// caller's thread, and only host code that allocates or loops needs it.
// With none installed nothing is checked.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "graph/dtype.h"
#include "graph/limits.h"
#include "graph/status.h"

namespace seqrt {

class RunControl;

// Bytes a run holds beyond its memory plan, counted against the budget
// while this lives. Movable; releases them when destroyed.
class HeldBytes {
 public:
  HeldBytes() = default;
  HeldBytes(HeldBytes&& other) noexcept { *this = std::move(other); }
  HeldBytes& operator=(HeldBytes&& other) noexcept;
  HeldBytes(const HeldBytes&) = delete;
  HeldBytes& operator=(const HeldBytes&) = delete;
  ~HeldBytes() { reset(); }

  void reset();
  int64_t bytes() const { return bytes_; }

 private:
  friend class RunControl;
  HeldBytes(const RunControl* control, int64_t bytes)
      : control_(control), bytes_(bytes) {}

  const RunControl* control_ = nullptr;
  int64_t bytes_ = 0;
};

class RunControl {
 public:
  explicit RunControl(const Limits& limits);

  // The deadline is limits.run_timeout_ms from now; 0 sets none.
  void set_timeout_ms(int64_t timeout_ms);
  // The run stops once `*generation` differs from its value now: a
  // Session's cancel() bumps it for every run in flight.
  void watch_cancel(const std::atomic<uint64_t>* generation);
  // What the memory plan counted for this run (weights, inputs, outputs,
  // arena); run-time allocations are checked against the budget on top.
  void set_planned_bytes(int64_t bytes) { planned_bytes_ = bytes; }

  const Limits& limits() const { return limits_; }

  // True once the run must stop (cancelled or past its deadline); cheap.
  bool should_stop() const;
  // ok, or the one-line kCancelled / kDeadlineExceeded error, `where`
  // saying where the run stopped ("after node 'loop0'").
  Status check_stop(const std::string& where) const;

  // A new tensor of `dtype` and `dims` against max_tensor_elements,
  // max_tensor_bytes and the memory budget. `runtime_sized`: the plan did
  // not count it, so what the run holds counts with it. `subject` names
  // the tensor in an error ("[Expand] node 'e': output 0"); it is called
  // only on failure.
  Status check_allocation(DType dtype, const std::vector<int64_t>& dims,
                          bool runtime_sized,
                          const std::function<std::string()>& subject) const;
  // Counts `bytes` the run holds beyond its plan (a run-time-sized node
  // output, the steps of a scan output) until the handle is reset; an
  // error naming `subject` when that passes the budget.
  Result<HeldBytes> hold(int64_t bytes,
                         const std::function<std::string()>& subject) const;
  int64_t held_bytes() const { return held_.load(std::memory_order_relaxed); }

  // The control installed on this thread, or null.
  static const RunControl* current();

  // Installs `control` on this thread until destroyed (scopes nest).
  class Scope {
   public:
    explicit Scope(const RunControl* control);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    const RunControl* previous_;
  };

 private:
  friend class HeldBytes;
  Status budget_error(const std::string& subject, int64_t bytes) const;

  Limits limits_;
  int64_t timeout_ms_ = 0;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point deadline_;
  const std::atomic<uint64_t>* generation_ = nullptr;
  uint64_t start_generation_ = 0;
  int64_t planned_bytes_ = 0;
  mutable std::atomic<int64_t> held_{0};
};

// check_allocation() of the current control; ok when there is none.
Status check_run_allocation(DType dtype, const std::vector<int64_t>& dims,
                            bool runtime_sized,
                            const std::function<std::string()>& subject);

// check_stop() of the current control; ok when there is none.
Status check_run_stop(const std::function<std::string()>& where);

// True for the codes of a run that stopped early (kCancelled,
// kDeadlineExceeded): callers pass such errors on without adding context,
// so that the message stays one clean line.
bool is_stopped_run(const Status& status);

}  // namespace seqrt
