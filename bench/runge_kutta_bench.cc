// seqrt::RungeKutta over a pre-norm transformer encoder layer (d=512,
// T=512, 8 heads, non-causal), compiled and run through the CPU backend as
// a user would: the layer alone as a graph, and RungeKutta (euler, rk2,
// rk4) whose body is the same layer reading the same weights.
//
// BM_EncoderLayer_Body times one evaluation of the layer. BM_RungeKutta
// times one step of the method; each iteration also runs the layer alone
// (untimed), so its `per_body` counter is the step's time over the layer's,
// both taken in the same iterations under the same load (the goal: rk4
// ≤ 4.3). GFLOP/s counts the layer's matrix products per evaluation.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "bench/roofline.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"

namespace seqrt {
namespace {

constexpr int64_t kSeq = 512, kModel = 512, kHeads = 8, kFfn = 2048;
constexpr int64_t kHeadDim = kModel / kHeads;

// Flops of one layer: Q, K, V and output projections, QKᵀ and PV, the FFN.
constexpr double kLayerFlops = 2.0 * kSeq * kModel * kModel * 4 +
                               2.0 * 2 * kSeq * kSeq * kModel +
                               2.0 * 2 * kSeq * kModel * kFfn;

Tensor uniform(std::vector<int64_t> dims, double bound, uint32_t seed) {
  int64_t count = 1;
  for (int64_t dim : dims) count *= dim;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(static_cast<float>(-bound),
                                             static_cast<float>(bound));
  std::vector<float> values(static_cast<size_t>(count));
  for (float& value : values) value = dist(rng);
  return Tensor::from_vector<float>(std::move(dims), values);
}

Tensor ints(std::vector<int64_t> values) {
  int64_t n = static_cast<int64_t>(values.size());
  return Tensor::from_vector<int64_t>({n}, values);
}

// The layer's weights by name; the body graph captures them by these names.
struct Weight {
  std::string name;
  Tensor value;
};

std::vector<Weight> layer_weights() {
  auto dense = [](int64_t in, int64_t out, uint32_t seed) {
    return uniform({in, out}, 1.0 / std::sqrt(static_cast<double>(in)), seed);
  };
  std::vector<float> ones(kModel, 1.0f), zeros(kModel, 0.0f);
  return {{"ln1.scale", Tensor::from_vector<float>({kModel}, ones)},
          {"ln1.bias", Tensor::from_vector<float>({kModel}, zeros)},
          {"wq", dense(kModel, kModel, 1)},
          {"wk", dense(kModel, kModel, 2)},
          {"wv", dense(kModel, kModel, 3)},
          {"wo", dense(kModel, kModel, 4)},
          {"ln2.scale", Tensor::from_vector<float>({kModel}, ones)},
          {"ln2.bias", Tensor::from_vector<float>({kModel}, zeros)},
          {"w1", dense(kModel, kFfn, 5)},
          {"w2", dense(kFfn, kModel, 6)}};
}

// Adds the layer y ↦ x + FFN(LN(x)), x = y + Attn(LN(y)), to `b`; `weight`
// gives the value of each named weight in this graph.
template <class WeightFn>
ValueId add_layer(GraphBuilder& b, ValueId y, WeightFn weight) {
  ValueId to_heads = b.constant("to_heads", ints({1, kSeq, kHeads, kHeadDim}));
  ValueId to_rows = b.constant("to_rows", ints({1, kSeq, kModel}));
  const AttrMap swap = {{"perm", std::vector<int64_t>{0, 2, 1, 3}}};
  auto heads = [&](ValueId x, const char* w) {
    ValueId p = b.add("MatMul", {x, weight(w)});
    return b.add("Transpose", {b.add("Reshape", {p, to_heads})}, swap);
  };
  ValueId n1 =
      b.add("LayerNormalization", {y, weight("ln1.scale"), weight("ln1.bias")});
  NodeOptions seqrt_op;
  seqrt_op.domain = kSeqrtDomain;
  ValueId a =
      b.add("Attention", {heads(n1, "wq"), heads(n1, "wk"), heads(n1, "wv")},
            {{"is_causal", int64_t{0}}}, seqrt_op);
  ValueId merged = b.add("Reshape", {b.add("Transpose", {a}, swap), to_rows});
  ValueId x = b.add("Add", {y, b.add("MatMul", {merged, weight("wo")})});
  ValueId n2 =
      b.add("LayerNormalization", {x, weight("ln2.scale"), weight("ln2.bias")});
  ValueId h = b.add("Gelu", {b.add("MatMul", {n2, weight("w1")})});
  return b.add("Add", {x, b.add("MatMul", {h, weight("w2")})});
}

Result<Graph> typed(GraphBuilder builder) {
  SEQRT_ASSIGN_OR_RETURN(Graph graph, std::move(builder).build());
  SEQRT_RETURN_IF_ERROR(infer_graph(graph));
  return graph;
}

const Shape kStateShape{1, kSeq, kModel};

// The layer alone, its weights as constants.
Result<Graph> layer_graph(const std::vector<Weight>& weights) {
  GraphBuilder b("encoder_layer");
  ValueId y = b.input("y", DType::kF32, kStateShape);
  std::map<std::string, ValueId> ids;
  for (const Weight& w : weights) ids[w.name] = b.constant(w.name, w.value);
  b.output(add_layer(b, y, [&](const char* name) { return ids.at(name); }),
           "f");
  return typed(std::move(b));
}

// One RungeKutta step whose body is the layer, capturing the outer graph's
// weight constants.
Result<Graph> runge_kutta_graph(const std::vector<Weight>& weights,
                                const std::string& method) {
  GraphBuilder body("layer");
  ValueId y_body = body.input("y", DType::kF32, kStateShape);
  std::map<std::string, ValueId> captured;
  for (const Weight& w : weights) {
    captured[w.name] =
        body.capture(w.name, DType::kF32, Shape::from_dims(w.value.dims()));
  }
  body.output(add_layer(body, y_body,
                        [&](const char* name) { return captured.at(name); }),
              "f");
  SEQRT_ASSIGN_OR_RETURN(Graph body_graph, typed(std::move(body)));
  GraphBuilder b("ode_layer");
  ValueId y = b.input("y", DType::kF32, kStateShape);
  for (const Weight& w : weights) b.constant(w.name, w.value);
  NodeOptions seqrt_op;
  seqrt_op.domain = kSeqrtDomain;
  b.output(b.add("RungeKutta", {y},
                 {{"body", std::make_shared<Graph>(std::move(body_graph))},
                  {"method", method}},
                 seqrt_op),
           "y_next");
  return typed(std::move(b));
}

// A graph compiled by the CPU backend, with its input.
struct Compiled {
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Executable> executable;
  std::vector<Tensor> inputs;

  double run_seconds(benchmark::State& bench) const {
    auto start = std::chrono::steady_clock::now();
    Result<std::vector<Tensor>> out = executable->run(inputs);
    auto stop = std::chrono::steady_clock::now();
    if (!out.is_ok()) bench.SkipWithError(out.status().to_string().c_str());
    return std::chrono::duration<double>(stop - start).count();
  }
};

Result<Compiled> compile(Result<Graph> graph) {
  SEQRT_RETURN_IF_ERROR(graph.status());
  Compiled c;
  c.backend = create_cpu_backend();
  SEQRT_ASSIGN_OR_RETURN(c.executable, c.backend->compile(*graph, {}));
  c.inputs.push_back(uniform({1, kSeq, kModel}, 1.0, 11));
  return c;
}

void BM_EncoderLayer_Body(benchmark::State& bench) {
  Result<Compiled> layer = compile(layer_graph(layer_weights()));
  if (!layer.is_ok()) {
    bench.SkipWithError(layer.status().to_string().c_str());
    return;
  }
  for (auto _ : bench) bench.SetIterationTime(layer->run_seconds(bench));
  bench::report_flops(bench, kLayerFlops);
}

void BM_RungeKutta(benchmark::State& bench, const std::string& method,
                   int stages) {
  std::vector<Weight> weights = layer_weights();
  Result<Compiled> layer = compile(layer_graph(weights));
  Result<Compiled> step = compile(runge_kutta_graph(weights, method));
  if (!layer.is_ok() || !step.is_ok()) {
    Status error = layer.is_ok() ? step.status() : layer.status();
    bench.SkipWithError(error.to_string().c_str());
    return;
  }
  double step_total = 0, layer_total = 0;
  for (auto _ : bench) {
    double seconds = step->run_seconds(bench);
    bench.SetIterationTime(seconds);
    step_total += seconds;
    bench.PauseTiming();
    layer_total += layer->run_seconds(bench);
    bench.ResumeTiming();
  }
  bench.counters["per_body"] = step_total / layer_total;
  bench::report_flops(bench, stages * kLayerFlops);
}

BENCHMARK(BM_EncoderLayer_Body)
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime()
    ->MinTime(1.0);
BENCHMARK_CAPTURE(BM_RungeKutta, euler, "euler", 1)
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime()
    ->MinTime(1.0);
BENCHMARK_CAPTURE(BM_RungeKutta, rk2, "rk2", 2)
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime()
    ->MinTime(1.0);
BENCHMARK_CAPTURE(BM_RungeKutta, rk4, "rk4", 4)
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime()
    ->MinTime(1.0);

}  // namespace
}  // namespace seqrt
