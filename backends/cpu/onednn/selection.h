// Which kernel runs an op that has both a oneDNN kernel (this folder) and
// seqrt's own (../kernels/): the choice measured by
// bench/onednn_ops_bench.cc, written down with its numbers in README.md.
// Tests and the benchmark force one path or the other to compare them.
#pragma once

#include <cstdint>

#include "backends/cpu/onednn/eltwise.h"
#include "backends/cpu/onednn/reduction.h"

namespace seqrt::cpu::onednn {

// The op classes with a oneDNN kernel besides matmul.
enum class OpClass {
  kSoftmax,    // Softmax, LogSoftmax
  kLayerNorm,  // LayerNormalization
  kBinary,     // Add, Sub, Mul, Div
  kConcat,
  kTranspose,  // a reorder between strided layouts; the last axis moves
  kTransposeKeepingLastAxis,  // the last axis stays: contiguous runs
  kConv,                      // Conv, 1-D and 2-D, grouped
};

// kMeasured: the measured choice; the others force a path (where oneDNN
// has no primitive for a problem, the own kernel runs anyway).
enum class Path { kMeasured, kOwn, kOneDnn };

// Whether a node with an f32 output of `elements` elements runs on oneDNN.
bool use_onednn(OpClass op_class, int64_t elements);
bool use_onednn(Eltwise kind, int64_t elements);
bool use_onednn(Reduction kind, int64_t elements);

// Forces `path` for the lifetime of this object (process-wide: for tests
// and benchmarks, which run one kernel at a time).
class ScopedPath {
 public:
  explicit ScopedPath(Path path);
  ~ScopedPath();
  ScopedPath(const ScopedPath&) = delete;
  ScopedPath& operator=(const ScopedPath&) = delete;

 private:
  Path previous_;
};

}  // namespace seqrt::cpu::onednn
