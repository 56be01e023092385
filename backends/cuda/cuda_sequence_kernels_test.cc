// The CUDA sequence kernels of kernel_table_sequence.cc against the
// reference backend on a GPU, each whole and cut in parts with the state
// carried (OPS.md: whole == parts), including single steps and the
// column scan's shared-memory state, and NeuralMemory's token loop. Skipped
// with the reason where no CUDA device exists; the conformance suite adds every
// op case on top.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "graph/builder.h"
#include "runtime/backend_registry.h"
#include "testing/random_tensor.h"
#include "tests/device_skip.h"

namespace seqrt {
namespace {

#define SKIP_WITHOUT_CUDA(backend) SEQRT_CREATE_BACKEND_OR_SKIP(backend, "cuda")

// One node; an empty tensor in `inputs` is an omitted optional input.
struct NodeCase {
  std::string domain;
  std::string op;
  AttrMap attrs;
  size_t outputs = 2;
};

Result<std::vector<Tensor>> run_node(Backend& backend, const NodeCase& c,
                                     const std::vector<Tensor>& inputs) {
  GraphBuilder b(c.op);
  std::vector<ValueId> ids;
  std::vector<Tensor> given;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].empty()) {
      ids.push_back(kNoValue);
      continue;
    }
    ids.push_back(b.input("in" + std::to_string(i), inputs[i].dtype(),
                          Shape::from_dims(inputs[i].dims())));
    given.push_back(inputs[i]);
  }
  NodeOptions options;
  options.domain = c.domain;
  std::vector<ValueId> out = b.add_node(c.op, ids, c.attrs, c.outputs, options);
  for (size_t i = 0; i < out.size(); ++i) {
    b.output(out[i], "out" + std::to_string(i));
  }
  SEQRT_ASSIGN_OR_RETURN(Graph graph, std::move(b).build());
  SEQRT_ASSIGN_OR_RETURN(auto executable,
                         backend.compile(graph, CompileOptions{}));
  return executable->run(std::move(given));
}

void expect_close(const Tensor& got, const Tensor& want, double tolerance,
                  const std::string& what) {
  ASSERT_EQ(got.dims(), want.dims()) << what;
  int reported = 0;
  for (int64_t i = 0; i < want.num_elements() && reported < 5; ++i) {
    double w = want.element_f64(i);
    double g = got.element_f64(i);
    if (!(std::abs(g - w) <= tolerance * (1 + std::abs(w)))) {
      ADD_FAILURE() << what << " element " << i << ": got " << g << ", want "
                    << w;
      ++reported;
    }
  }
}

// Elements [from, to) of `axis`.
Tensor slice_axis(const Tensor& x, size_t axis, int64_t from, int64_t to) {
  std::vector<int64_t> dims = x.dims();
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < axis; ++i) outer *= dims[i];
  for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
  const int64_t length = dims[axis];
  dims[axis] = to - from;
  Tensor out = Tensor::allocate(DType::kF32, dims).value();
  float* dst = out.mutable_data_as<float>();
  const float* src = x.data_as<float>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t t = from; t < to; ++t) {
      for (int64_t i = 0; i < inner; ++i) {
        *dst++ = src[(o * length + t) * inner + i];
      }
    }
  }
  return out;
}

// Which inputs carry the time axis (and where), which is the past state.
struct TimeLayout {
  std::vector<int> time_axis;  // per input: -1 when not sliced
  size_t past_input;
};

// Runs `inputs` whole on the reference and on CUDA, then on CUDA in the
// parts [0, cuts[0]), [cuts[0], cuts[1]), ..., [cuts.back(), T) with the
// state carried; output 0 has its time axis at `out_axis`.
void check_whole_and_parts(Backend& cuda, const NodeCase& c,
                           std::vector<Tensor> inputs, const TimeLayout& layout,
                           size_t out_axis, const std::vector<int64_t>& cuts,
                           double tolerance) {
  auto reference = create_backend("reference");
  ASSERT_TRUE(reference.is_ok());
  auto want = run_node(**reference, c, inputs);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  auto got = run_node(cuda, c, inputs);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  expect_close((*got)[0], (*want)[0], tolerance, c.op + " whole Y");
  expect_close((*got)[1], (*want)[1], tolerance, c.op + " whole state");
  int64_t length = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (layout.time_axis[i] >= 0) length = inputs[i].dim(layout.time_axis[i]);
  }
  std::vector<int64_t> bounds = {0};
  bounds.insert(bounds.end(), cuts.begin(), cuts.end());
  bounds.push_back(length);
  Tensor state = inputs[layout.past_input];
  for (size_t p = 0; p + 1 < bounds.size(); ++p) {
    std::vector<Tensor> part = inputs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (layout.time_axis[i] < 0) continue;
      part[i] =
          slice_axis(inputs[i], layout.time_axis[i], bounds[p], bounds[p + 1]);
    }
    part[layout.past_input] = state;
    auto piece = run_node(cuda, c, part);
    ASSERT_TRUE(piece.is_ok()) << piece.status().to_string();
    expect_close((*piece)[0],
                 slice_axis((*want)[0], out_axis, bounds[p], bounds[p + 1]),
                 tolerance, c.op + " part " + std::to_string(p));
    state = (*piece)[1];
  }
  expect_close(state, (*want)[1], tolerance, c.op + " carried state");
}

TEST(CudaSequenceKernels, CausalConvWithStateFullAndSteps) {
  SKIP_WITHOUT_CUDA(cuda);
  const int64_t b = 2, ch = 5, l = 37, k = 4;
  for (const char* activation : {"none", "silu"}) {
    NodeCase c{kOnnxDomain,
               "CausalConvWithState",
               {{"activation", Attribute(std::string(activation))}}};
    std::vector<Tensor> inputs = {random_uniform_f32({b, ch, l}, 1, -1, 1),
                                  random_uniform_f32({ch, 1, k}, 2, -1, 1),
                                  random_uniform_f32({ch}, 3, -1, 1),
                                  random_uniform_f32({b, ch, k - 1}, 4, -1, 1)};
    // Parts of 1 and 2 steps (shorter than the state) and a long one.
    check_whole_and_parts(**cuda, c, inputs, {{2, -1, -1, -1}, 3}, 2,
                          {1, 3, 20}, 1e-5);
  }
}

TEST(CudaSequenceKernels, RetentionWholeAndParts) {
  SKIP_WITHOUT_CUDA(cuda);
  const int64_t b = 2, h = 3, t = 150, dk = 24, dv = 40;
  NodeCase c{
      kSeqrtDomain, "Retention", {{"chunk_size", Attribute(int64_t{16})}}};
  std::vector<Tensor> inputs = {random_uniform_f32({b, h, t, dk}, 10, -1, 1),
                                random_uniform_f32({b, h, t, dk}, 11, -1, 1),
                                random_uniform_f32({b, h, t, dv}, 12, -1, 1),
                                random_uniform_f32({b, h, dk, dv}, 13, -1, 1)};
  check_whole_and_parts(**cuda, c, inputs, {{2, 2, 2, -1}, 3}, 2, {1, 77},
                        2e-4);
}

// Every cut after each step: the parts run the recurrence (column scan),
// the whole sequence the chunkwise form (T >= kChunkwiseMinSteps = 16).
std::vector<int64_t> every_step(int64_t length) {
  std::vector<int64_t> cuts;
  for (int64_t t = 1; t < length; ++t) cuts.push_back(t);
  return cuts;
}

TEST(CudaSequenceKernels, ChunkwiseEqualsRecurrence) {
  SKIP_WITHOUT_CUDA(cuda);
  const int64_t t = 24;
  NodeCase retention{kSeqrtDomain,
                     "Retention",
                     {{"gammas", Attribute(std::vector<float>{0.9f, 0.0f})},
                      {"chunk_size", Attribute(int64_t{8})}}};
  check_whole_and_parts(**cuda, retention,
                        {random_uniform_f32({1, 2, t, 8}, 50, -1, 1),
                         random_uniform_f32({1, 2, t, 8}, 51, -1, 1),
                         random_uniform_f32({1, 2, t, 12}, 52, -1, 1),
                         random_uniform_f32({1, 2, 8, 12}, 53, -1, 1)},
                        {{2, 2, 2, -1}, 3}, 2, every_step(t), 2e-4);
  NodeCase gated{kOnnxDomain,
                 "LinearAttention",
                 {{"update_rule", Attribute(std::string("gated"))},
                  {"q_num_heads", Attribute(int64_t{2})},
                  {"kv_num_heads", Attribute(int64_t{1})},
                  {"chunk_size", Attribute(int64_t{16})}}};
  check_whole_and_parts(**cuda, gated,
                        {random_uniform_f32({1, t, 2 * 8}, 54, -1, 1),
                         random_uniform_f32({1, t, 8}, 55, -1, 1),
                         random_uniform_f32({1, t, 12}, 56, -1, 1),
                         random_uniform_f32({1, 1, 8, 12}, 57, -1, 1),
                         random_uniform_f32({1, t, 1}, 58, -1, 0), Tensor()},
                        {{1, 1, 1, -1, 1, -1}, 3}, 1, every_step(t), 2e-4);
  // SSD: B=1, L=24, H=2, P=8, G=1, N=4, with D, z and dt_bias.
  NodeCase ssd{kSeqrtDomain, "SSD", {{"chunk_size", Attribute(int64_t{8})}}};
  check_whole_and_parts(**cuda, ssd,
                        {random_uniform_f32({1, t, 2, 8}, 60, -1, 1),
                         random_uniform_f32({1, t, 2}, 61, -3, 1),
                         random_uniform_f32({2}, 62, -2, -0.1f),
                         random_uniform_f32({1, t, 1, 4}, 63, -1, 1),
                         random_uniform_f32({1, t, 1, 4}, 64, -1, 1),
                         random_uniform_f32({2}, 65, -1, 1),
                         random_uniform_f32({1, t, 2, 8}, 66, -1, 1),
                         random_uniform_f32({2}, 67, -0.5f, 0.5f),
                         random_uniform_f32({1, 2, 8, 4}, 68, -1, 1)},
                        {{1, 1, -1, 1, 1, -1, 1, -1, -1}, 8}, 1, every_step(t),
                        2e-4);
}

TEST(CudaSequenceKernels, RetentionStateInSharedMemory) {
  SKIP_WITHOUT_CUDA(cuda);
  // dk = 600: 32 lanes x 19 rows per column, more than registers hold.
  const int64_t t = 20, dk = 600, dv = 8;
  NodeCase c{kSeqrtDomain, "Retention", {}};
  std::vector<Tensor> inputs = {
      random_uniform_f32({1, 2, t, dk}, 20, -0.2f, 0.2f),
      random_uniform_f32({1, 2, t, dk}, 21, -0.2f, 0.2f),
      random_uniform_f32({1, 2, t, dv}, 22, -1, 1),
      random_uniform_f32({1, 2, dk, dv}, 23, -0.1f, 0.1f)};
  check_whole_and_parts(**cuda, c, inputs, {{2, 2, 2, -1}, 3}, 2, {9}, 2e-4);
}

TEST(CudaSequenceKernels, LinearAttentionEveryRuleWholeAndParts) {
  SKIP_WITHOUT_CUDA(cuda);
  const int64_t b = 2, t = 90, hq = 4, hkv = 2, dk = 16, dv = 24;
  struct Rule {
    const char* name;
    int64_t decay_width;  // 0: none, hkv: per head, hkv·dk: per key
    int64_t beta_width;   // 0: none, 1: shared, hkv: per head
  };
  for (Rule rule :
       {Rule{"linear", 0, 0}, Rule{"gated", hkv, 0}, Rule{"gated", hkv * dk, 0},
        Rule{"delta", 0, hkv}, Rule{"gated_delta", hkv * dk, 1},
        Rule{"gated_delta", hkv, hkv}}) {
    NodeCase c{kOnnxDomain,
               "LinearAttention",
               {{"update_rule", Attribute(std::string(rule.name))},
                {"q_num_heads", Attribute(hq)},
                {"kv_num_heads", Attribute(hkv)},
                {"chunk_size", Attribute(int64_t{32})}}};
    // Small keys keep the delta rules' I - β k kᵀ contractive.
    std::vector<Tensor> inputs = {
        random_uniform_f32({b, t, hq * dk}, 30, -1, 1),
        random_uniform_f32({b, t, hkv * dk}, 31, -0.25f, 0.25f),
        random_uniform_f32({b, t, hkv * dv}, 32, -1, 1),
        random_uniform_f32({b, hkv, dk, dv}, 33, -0.5f, 0.5f),
        rule.decay_width > 0
            ? random_uniform_f32({b, t, rule.decay_width}, 34, -0.5f, 0.0f)
            : Tensor(),
        rule.beta_width > 0
            ? random_uniform_f32({b, t, rule.beta_width}, 35, 0.1f, 0.9f)
            : Tensor()};
    TimeLayout layout{{1, 1, 1, -1, rule.decay_width > 0 ? 1 : -1,
                       rule.beta_width > 0 ? 1 : -1},
                      3};
    SCOPED_TRACE(std::string(rule.name) + " decay " +
                 std::to_string(rule.decay_width) + " beta " +
                 std::to_string(rule.beta_width));
    check_whole_and_parts(**cuda, c, inputs, layout, 1, {1, 45}, 2e-4);
  }
}

TEST(CudaSequenceKernels, SsdWholeAndParts) {
  SKIP_WITHOUT_CUDA(cuda);
  const int64_t b = 2, l = 130, h = 4, p = 32, g = 2, n = 16;
  NodeCase c{kSeqrtDomain, "SSD", {{"dt_max", Attribute(1.5f)}}};
  std::vector<Tensor> inputs = {random_uniform_f32({b, l, h, p}, 40, -1, 1),
                                random_uniform_f32({b, l, h}, 41, -3, 1),
                                random_uniform_f32({h}, 42, -2, -0.1f),
                                random_uniform_f32({b, l, g, n}, 43, -1, 1),
                                random_uniform_f32({b, l, g, n}, 44, -1, 1),
                                random_uniform_f32({h}, 45, -1, 1),
                                random_uniform_f32({b, l, h, p}, 46, -1, 1),
                                random_uniform_f32({h}, 47, -0.5f, 0.5f),
                                random_uniform_f32({b, h, p, n}, 48, -1, 1)};
  TimeLayout layout{{1, 1, -1, 1, 1, -1, 1, -1, -1}, 8};
  check_whole_and_parts(**cuda, c, inputs, layout, 1, {1, 64}, 2e-4);
}

// NeuralMemory's inputs for B = 2, H = 2: small learning rates and
// weights keep the memory's updates contractive over T tokens.
std::vector<Tensor> neural_memory_inputs(int64_t t, int64_t d, int64_t m,
                                         int depth, uint32_t seed) {
  const int64_t b = 2, h = 2;
  return {random_uniform_f32({b, h, t, d}, seed, -1, 1),
          random_uniform_f32({b, h, t, d}, seed + 1, -1, 1),
          random_uniform_f32({b, h, t, d}, seed + 2, -1, 1),
          random_uniform_f32({b, h, t}, seed + 3, 0.0f, 0.05f),
          random_uniform_f32({b, h, t}, seed + 4, 0.5f, 0.95f),
          random_uniform_f32({b, h, t}, seed + 5, 0.0f, 0.1f),
          random_uniform_f32({h, d, m}, seed + 6, -0.3f, 0.3f),
          depth == 2 ? random_uniform_f32({h, m, d}, seed + 7, -0.3f, 0.3f)
                     : Tensor(),
          Tensor(),
          Tensor::from_vector<int64_t>({b}, {0, 5})};
}

// The whole sequence against the reference (y and the state), then the
// parts cut at `cuts` on CUDA with the state and the position carried,
// each part's y against the reference's slice and the final state against
// the whole run's.
void check_neural_memory(Backend& cuda, const NodeCase& c,
                         const std::vector<Tensor>& inputs,
                         const std::vector<int64_t>& cuts, double tolerance) {
  auto reference = create_backend("reference");
  ASSERT_TRUE(reference.is_ok());
  auto want = run_node(**reference, c, inputs);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  auto got = run_node(cuda, c, inputs);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  expect_close((*got)[0], (*want)[0], tolerance, "NeuralMemory whole y");
  expect_close((*got)[1], (*want)[1], tolerance, "NeuralMemory whole state");
  const Tensor& position = inputs[9];
  std::vector<int64_t> bounds = {0};
  bounds.insert(bounds.end(), cuts.begin(), cuts.end());
  bounds.push_back(inputs[0].dim(2));
  Tensor state;  // none before the first part: the weights start at W1/W2
  for (size_t p = 0; p + 1 < bounds.size(); ++p) {
    std::vector<Tensor> part = inputs;
    for (size_t i = 0; i < 6; ++i) {
      part[i] = slice_axis(inputs[i], 2, bounds[p], bounds[p + 1]);
    }
    part[8] = state;
    part[9] = Tensor::from_vector<int64_t>(
        {2}, {position.element_i64(0) + bounds[p],
              position.element_i64(1) + bounds[p]});
    auto piece = run_node(cuda, c, part);
    ASSERT_TRUE(piece.is_ok()) << piece.status().to_string();
    expect_close((*piece)[0],
                 slice_axis((*want)[0], 2, bounds[p], bounds[p + 1]), tolerance,
                 "NeuralMemory part " + std::to_string(p));
    state = (*piece)[1];
  }
  expect_close(state, (*want)[1], tolerance, "NeuralMemory carried state");
}

TEST(CudaSequenceKernels, NeuralMemoryWholeAndParts) {
  SKIP_WITHOUT_CUDA(cuda);
  struct Config {
    int64_t d, m;
    int depth;
    int64_t chunk;
    const char* activation;
    const char* retrieve;
  };
  // Momentum in registers (chunk 1: the anchor is the weights; chunk 16:
  // the anchor stored, cut mid-chunk with positions 0 and 5), depth 1,
  // retrieval before the update, and d 64, m 128 (momentum in shared
  // memory beside 64 KiB of weights, opt-in shared memory).
  for (const Config& config : {Config{16, 64, 2, 1, "gelu", "after_update"},
                               Config{16, 32, 2, 16, "silu", "after_update"},
                               Config{16, 16, 1, 4, "gelu", "before_update"},
                               Config{32, 32, 2, 1, "silu", "before_update"},
                               Config{64, 128, 2, 1, "gelu", "after_update"}}) {
    SCOPED_TRACE("d " + std::to_string(config.d) + " m " +
                 std::to_string(config.m) + " depth " +
                 std::to_string(config.depth) + " chunk " +
                 std::to_string(config.chunk) + " " + config.activation + " " +
                 config.retrieve);
    NodeCase c{kSeqrtDomain,
               "NeuralMemory",
               {{"depth", Attribute(int64_t{config.depth})},
                {"chunk_size", Attribute(config.chunk)},
                {"activation", Attribute(std::string(config.activation))},
                {"retrieve", Attribute(std::string(config.retrieve))}}};
    check_neural_memory(
        **cuda, c,
        neural_memory_inputs(40, config.d, config.m, config.depth, 70), {1, 21},
        2e-4);
  }
}

TEST(CudaSequenceKernels, NeuralMemoryRefusesWhatDoesNotFit) {
  SKIP_WITHOUT_CUDA(cuda);
  // m = 4d at d = 64: weights and momentum need 260 KiB per block, so
  // compiling the node fails (supports() asks the planner), naming it.
  NodeCase c{kSeqrtDomain, "NeuralMemory", {}};
  auto got = run_node(**cuda, c, neural_memory_inputs(3, 64, 256, 2, 80));
  ASSERT_FALSE(got.is_ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(got.status().message().find("[NeuralMemory]"), std::string::npos)
      << got.status().message();
}

}  // namespace
}  // namespace seqrt
