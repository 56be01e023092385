#include "backends/cpu/onednn/selection.h"

#include <atomic>

namespace seqrt::cpu::onednn {
namespace {

std::atomic<Path> forced{Path::kMeasured};

// Below this many elements a primitive call's fixed cost (argument maps,
// stream) outweighs what oneDNN saves: at one decode token (768 to 6144
// elements) oneDNN's softmax, layer norm, sigmoid and transpose measured
// 0.5–0.93× the own kernels, from 49k elements up 1.3× and more.
constexpr int64_t kMinElements = 16384;

// The measured choice: README.md, "Which kernel runs each op", has the
// numbers. Ties (within the noise, about ±10 %) stay on the own kernel:
// no primitive to create per shape.
bool measured(OpClass op_class, int64_t elements) {
  switch (op_class) {
    case OpClass::kSoftmax:    // 1.2–1.9× faster
    case OpClass::kLayerNorm:  // 1.0–1.6×
    case OpClass::kTranspose:  // 7–8× (the own copy is element by element)
    case OpClass::kBinary:     // 1.2–2.0× on two threads (ties on one)
      return elements >= kMinElements;
    case OpClass::kConv:  // 1.0–3.7×, 3–4× at decode
      return true;
    case OpClass::kTransposeKeepingLastAxis:  // 0.60–0.66× on two threads
    case OpClass::kConcat:                    // 0.64–1.8×: no clear class
      return false;
  }
  return false;
}

Path current() { return forced.load(std::memory_order_relaxed); }

}  // namespace

bool use_onednn(OpClass op_class, int64_t elements) {
  if (current() != Path::kMeasured) return current() == Path::kOneDnn;
  return measured(op_class, elements);
}

bool use_onednn(Eltwise kind, int64_t elements) {
  if (current() != Path::kMeasured) return current() == Path::kOneDnn;
  switch (kind) {
    case Eltwise::kGeluErf:  // 2.0×
    case Eltwise::kExp:      // 1.8×
    case Eltwise::kSigmoid:  // 1.4×
      return elements >= kMinElements;
    // Softplus: 1.5× but inexact (log(1 + e^x) without log1p: 3e-3
    // relative error at x = −8).
    case Eltwise::kSoftplus:
    case Eltwise::kTanh:        // 0.30×
    case Eltwise::kGeluTanh:    // 0.33× (oneDNN 2.6's tanh is slow here)
    case Eltwise::kLog:         // 0.50×
    case Eltwise::kReciprocal:  // 0.77×
    case Eltwise::kSqrt:        // 0.94×
    case Eltwise::kRelu:        // 1.0–1.1×, ties
    case Eltwise::kAbs:
    case Eltwise::kNeg:
      return false;
  }
  return false;
}

bool use_onednn(Reduction kind, int64_t elements) {
  if (current() != Path::kMeasured) return current() == Path::kOneDnn;
  switch (kind) {
    case Reduction::kMax:  // 5.5–6.6×
    case Reduction::kMin:
      return elements >= kMinElements;
    case Reduction::kSum:   // 0.27×
    case Reduction::kMean:  // 0.37×
      return false;
  }
  return false;
}

ScopedPath::ScopedPath(Path path) : previous_(forced.exchange(path)) {}

ScopedPath::~ScopedPath() { forced.store(previous_); }

}  // namespace seqrt::cpu::onednn
