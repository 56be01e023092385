// make_tiny_recurrent DIR: writes DIR/tiny_recurrent.seqrt, a small stateful
// model for the embedding samples (samples/embed_c, samples/embed_cpp): one
// RetNet retention layer whose recurrent state is a state pair, so a Stream
// can prefill a prompt and then decode one position at a time. The wiring
// is documented in samples/README.md.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"
#include "importers/native/writer.h"

namespace seqrt {
namespace {

constexpr int64_t kHeads = 2;
constexpr int64_t kDim = 8;  // per head, for keys and values alike
constexpr uint32_t kSeed = 20261121;

// (kDim, kDim) weights from U(-1/sqrt(kDim), 1/sqrt(kDim)), as PyTorch's
// nn.Linear initialises them, from mt19937's raw output: the standard fixes
// that sequence, so every build writes the same file.
Tensor linear_weight(std::mt19937& rng) {
  double bound = 1.0 / std::sqrt(static_cast<double>(kDim));
  std::vector<float> values(kDim * kDim);
  for (float& value : values) {
    double unit = (rng() >> 8) * (1.0 / (1u << 24));  // [0, 1)
    value = static_cast<float>(bound * (2.0 * unit - 1.0));
  }
  return Tensor::from_vector<float>({kDim, kDim}, values);
}

NodeOptions named(const std::string& name,
                  std::vector<std::string> outputs = {}) {
  NodeOptions options;
  options.name = name;
  options.output_names = std::move(outputs);
  return options;
}

// x @ W with W (kDim, kDim), broadcast over the batch and head axes.
ValueId project(GraphBuilder& b, std::mt19937& rng, ValueId x,
                const std::string& name) {
  ValueId weight = b.constant(name + ".weight", linear_weight(rng));
  return b.add("MatMul", {x, weight}, {}, named(name));
}

Result<Graph> build_tiny_recurrent() {
  std::mt19937 rng(kSeed);
  GraphBuilder b("tiny_recurrent");
  ValueId x = b.input("x", DType::kF32, {1, kHeads, Dim::symbol("seq"), kDim});
  ValueId past = b.input("past_state", DType::kF32, {1, kHeads, kDim, kDim});
  ValueId q = project(b, rng, x, "q_proj");
  ValueId k = project(b, rng, x, "k_proj");
  ValueId v = project(b, rng, x, "v_proj");
  NodeOptions retention = named("retention", {"retained", "present_state"});
  retention.domain = kSeqrtDomain;
  std::vector<ValueId> outs =
      b.add_node("Retention", {q, k, v, past}, {}, 2, retention);
  ValueId mixed = project(b, rng, outs[0], "o_proj");
  b.output(b.add("Add", {x, mixed}, {}, named("residual")), "y");
  b.output(outs[1]);
  b.state_pair(past, outs[1]);  // zeros before the first position
  b.set_metadata("producer", "samples/models/make_tiny_recurrent");
  b.set_metadata("description",
                 "one RetNet retention layer (2 heads of 8) with q/k/v/o "
                 "projections and a residual; state past_state -> "
                 "present_state");
  b.set_metadata("seed", std::to_string(kSeed));
  SEQRT_ASSIGN_OR_RETURN(Graph graph, std::move(b).build());
  SEQRT_RETURN_IF_ERROR(infer_graph(graph));
  return graph;
}

Status write_sample(const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return io_error("cannot create directory '{}': {}", dir, error.message());
  }
  SEQRT_ASSIGN_OR_RETURN(Graph graph, build_tiny_recurrent());
  std::string path =
      (std::filesystem::path(dir) / "tiny_recurrent.seqrt").string();
  SEQRT_RETURN_IF_ERROR(write_seqrt_file(graph, path));
  fmt::print("wrote {}\n", path);
  return Status::ok();
}

}  // namespace
}  // namespace seqrt

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_tiny_recurrent DIR\n");
    return 2;
  }
  seqrt::Status status = seqrt::write_sample(argv[1]);
  if (!status.is_ok()) {
    std::fprintf(stderr, "make_tiny_recurrent: error: %s\n",
                 status.message().c_str());
    return 1;
  }
  return 0;
}
