// One compiled CPU executable run from several threads at once: the oneDNN
// primitives it shares (a convolution with constant weights, softmax,
// reduction) each get the calling thread's scratch memory, so concurrent
// runs give the serial result.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/onednn/selection.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"
#include "testing/random_tensor.h"

namespace seqrt::cpu::onednn {
namespace {

using Ints = std::vector<int64_t>;

// Mamba's causal depthwise conv, then a softmax and a max over its rows:
// big enough for the oneDNN paths.
Graph conv_softmax_graph() {
  GraphBuilder b("conv_softmax");
  ValueId x = b.input("x", DType::kF32, {4, 32, 256});
  ValueId w = b.constant("w", random_uniform_f32({32, 1, 4}, 2));
  ValueId bias = b.constant("b", random_uniform_f32({32}, 3));
  ValueId conv = b.add("Conv", {x, w, bias},
                       {{"group", int64_t{32}}, {"pads", Ints{3, 0}}});
  ValueId soft = b.add("Softmax", {conv}, {{"axis", int64_t{-1}}});
  b.output(soft, "y");
  b.output(b.add("ReduceMax", {conv}, {{"keepdims", int64_t{0}}}), "m");
  Graph graph = std::move(b).build().value();
  EXPECT_TRUE(infer_graph(graph).is_ok());
  return graph;
}

TEST(OneDnnConcurrency, ThreadsSharingAnExecutableGetTheSerialResult) {
  ScopedPath forced(Path::kOneDnn);
  std::unique_ptr<Backend> backend = create_cpu_backend();
  auto executable = backend->compile(conv_softmax_graph(), {});
  ASSERT_TRUE(executable.is_ok()) << executable.status().message();
  constexpr int kThreads = 4;
  constexpr int kRuns = 25;
  std::vector<Tensor> inputs;
  std::vector<std::vector<Tensor>> serial;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(random_uniform_f32({4, 32, 256}, 10 + t));
    auto outputs = (*executable)->run({inputs[t]});
    ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
    serial.push_back(std::move(outputs).value());
  }
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int run = 0; run < kRuns; ++run) {
        auto outputs = (*executable)->run({inputs[t]});
        if (!outputs.is_ok()) {
          ++mismatches[t];
          continue;
        }
        for (size_t o = 0; o < serial[t].size(); ++o) {
          const float* got = (*outputs)[o].data_as<float>();
          const float* want = serial[t][o].data_as<float>();
          for (int64_t i = 0; i < serial[t][o].num_elements(); ++i) {
            if (got[i] != want[i]) {
              ++mismatches[t];
              break;
            }
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(mismatches[t], 0) << "thread " << t;
  }
}

}  // namespace
}  // namespace seqrt::cpu::onednn
