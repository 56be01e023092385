// make_tiny_mlp DIR: writes DIR/tiny_mlp.seqrt, a small token model (token
// embedding, two pre-norm MLP blocks with residuals, final norm and a
// projection to vocabulary logits), and DIR/tokens.npy, a (1,8) input for
// it. The wiring is documented in samples/README.md.
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
#include "importers/tensor/npy.h"

namespace seqrt {
namespace {

constexpr int64_t kVocab = 64;
constexpr int64_t kModel = 32;    // d: the residual stream width
constexpr int64_t kHidden = 128;  // the MLP's inner width, 4 * d
constexpr int kBlocks = 2;
constexpr uint32_t kSeed = 20240521;
constexpr int64_t kSampleTokens = 8;
constexpr double kPi = 3.14159265358979323846;

// Weights come from mt19937's raw output, whose sequence the C++ standard
// fixes, rather than from std::*_distribution, whose results differ between
// standard libraries: the same seed gives the same file everywhere.
class Init {
 public:
  explicit Init(uint32_t seed) : rng_(seed) {}

  double uniform01() { return (rng_() >> 8) * (1.0 / (1u << 24)); }  // [0,1)
  double normal() {                 // Box-Muller
    double u1 = 1.0 - uniform01();  // (0,1]: log is finite
    double u2 = uniform01();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
  }
  uint32_t next() { return rng_(); }

  // Like PyTorch's nn.Embedding: N(0, 1).
  Tensor embedding(int64_t rows, int64_t cols) {
    return fill({rows, cols}, [this] { return normal(); });
  }
  // Like PyTorch's nn.Linear, weight and bias: U(-1/sqrt(fan_in),
  // 1/sqrt(fan_in)). Stored (in, out) so that y = x @ W.
  Tensor linear_weight(int64_t in, int64_t out) {
    return uniform({in, out}, 1.0 / std::sqrt(static_cast<double>(in)));
  }
  Tensor linear_bias(int64_t in, int64_t out) {
    return uniform({out}, 1.0 / std::sqrt(static_cast<double>(in)));
  }

 private:
  Tensor uniform(std::vector<int64_t> dims, double bound) {
    return fill(std::move(dims),
                [this, bound] { return bound * (2.0 * uniform01() - 1.0); });
  }
  template <typename Fn>
  Tensor fill(std::vector<int64_t> dims, Fn next_value) {
    int64_t count = 1;
    for (int64_t dim : dims) count *= dim;
    std::vector<float> values(count);
    for (float& value : values) value = static_cast<float>(next_value());
    return Tensor::from_vector<float>(std::move(dims), values);
  }

  std::mt19937 rng_;
};

Tensor filled(int64_t size, float value) {
  return Tensor::from_vector<float>({size}, std::vector<float>(size, value));
}

NodeOptions named(const std::string& name) {
  NodeOptions options;
  options.name = name;
  return options;
}

// LayerNormalization over the last axis with a unit scale and zero bias.
ValueId layer_norm(GraphBuilder& b, ValueId x, const std::string& prefix) {
  ValueId scale = b.constant(prefix + ".scale", filled(kModel, 1.0f));
  ValueId bias = b.constant(prefix + ".bias", filled(kModel, 0.0f));
  return b.add("LayerNormalization", {x, scale, bias},
               {{"axis", int64_t{-1}}, {"epsilon", 1e-5f}}, named(prefix));
}

// y = x @ W + b, with W (in, out).
ValueId linear(GraphBuilder& b, Init& init, ValueId x, int64_t in, int64_t out,
               const std::string& prefix) {
  ValueId weight = b.constant(prefix + ".weight", init.linear_weight(in, out));
  ValueId bias = b.constant(prefix + ".bias", init.linear_bias(in, out));
  ValueId product = b.add("MatMul", {x, weight}, {}, named(prefix + ".matmul"));
  return b.add("Add", {product, bias}, {}, named(prefix + ".add_bias"));
}

// x + fc2(gelu(fc1(layer_norm(x)))).
ValueId mlp_block(GraphBuilder& b, Init& init, ValueId x, int index) {
  std::string prefix = fmt::format("block{}", index);
  ValueId normed = layer_norm(b, x, prefix + ".norm");
  ValueId up = linear(b, init, normed, kModel, kHidden, prefix + ".fc1");
  ValueId act = b.add("Gelu", {up}, {}, named(prefix + ".gelu"));
  ValueId down = linear(b, init, act, kHidden, kModel, prefix + ".fc2");
  return b.add("Add", {x, down}, {}, named(prefix + ".residual"));
}

Result<Graph> build_tiny_mlp(Init& init) {
  GraphBuilder b("tiny_mlp");
  ValueId tokens = b.input("tokens", DType::kI64,
                           {Dim::symbol("batch"), Dim::symbol("seq")});
  ValueId table =
      b.constant("embedding.weight", init.embedding(kVocab, kModel));
  ValueId x = b.add("Gather", {table, tokens}, {{"axis", int64_t{0}}},
                    named("embedding"));
  for (int i = 0; i < kBlocks; ++i) x = mlp_block(b, init, x, i);
  ValueId normed = layer_norm(b, x, "final_norm");
  b.output(linear(b, init, normed, kModel, kVocab, "lm_head"), "logits");
  b.set_metadata("producer", "samples/models/make_tiny_mlp");
  b.set_metadata("description",
                 "token embedding, 2 pre-norm GELU MLP blocks, final "
                 "LayerNormalization, vocabulary projection");
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
  Init init(kSeed);
  SEQRT_ASSIGN_OR_RETURN(Graph graph, build_tiny_mlp(init));
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < kSampleTokens; ++i)
    ids.push_back(init.next() % kVocab);
  Tensor tokens = Tensor::from_vector<int64_t>({1, kSampleTokens}, ids);

  std::filesystem::path root(dir);
  SEQRT_RETURN_IF_ERROR(
      write_seqrt_file(graph, (root / "tiny_mlp.seqrt").string()));
  SEQRT_RETURN_IF_ERROR(write_npy_file(tokens, (root / "tokens.npy").string()));
  fmt::print("wrote {} and {}\n", (root / "tiny_mlp.seqrt").string(),
             (root / "tokens.npy").string());
  return Status::ok();
}

}  // namespace
}  // namespace seqrt

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_tiny_mlp DIR\n");
    return 2;
  }
  seqrt::Status status = seqrt::write_sample(argv[1]);
  if (!status.is_ok()) {
    std::fprintf(stderr, "make_tiny_mlp: error: %s\n",
                 status.message().c_str());
    return 1;
  }
  return 0;
}
