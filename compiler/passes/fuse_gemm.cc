// A 2-D MatMul(A, B) followed by Add(bias) becomes Gemm(A, B, bias), when
// the bias broadcasts to (M, N) without widening it (ONNX Gemm's C). MatMul
// of higher rank stays: Gemm has no batch dims.
#include "compiler/passes/match.h"
#include "compiler/passes/passes.h"

namespace seqrt {
namespace {

const Shape* rank2(const Matcher& m, ValueId id) {
  const Shape* shape = m.shape(id);
  return shape != nullptr && shape->rank() == 2 ? shape : nullptr;
}

std::optional<Fusion> match_gemm(const Matcher& m, int n) {
  const Node& matmul = m.node(n);
  if (matmul.op != "MatMul" || !matmul.domain.empty() ||
      !matmul.attrs.empty() || rank2(m, matmul.inputs[0]) == nullptr ||
      rank2(m, matmul.inputs[1]) == nullptr ||
      rank2(m, matmul.outputs[0]) == nullptr ||
      !is_float(m.dtype(matmul.inputs[0]))) {
    return std::nullopt;
  }
  ValueId product = matmul.outputs[0];
  int add_n = sole_consumer(m, product);
  std::optional<ValueId> bias =
      add_n < 0 ? std::nullopt
                : broadcast_operand(m, m.node(add_n), "Add", product);
  if (!bias || *bias == product) return std::nullopt;
  Fusion fusion;
  fusion.remove = {n, add_n};
  ValueId y = m.node(add_n).outputs[0];
  if (!m.is_private(fusion.remove, {y})) return std::nullopt;
  Node gemm;
  gemm.name = m.node(add_n).name;
  gemm.op = "Gemm";
  gemm.inputs = {matmul.inputs[0], matmul.inputs[1], *bias};
  gemm.outputs = {y};
  fusion.add.push_back(std::move(gemm));
  return fusion;
}

}  // namespace

Pass fuse_gemm_pass() {
  return {"fuse_gemm",
          [](Graph& graph) { return apply_fusions(graph, match_gemm); }};
}

}  // namespace seqrt
