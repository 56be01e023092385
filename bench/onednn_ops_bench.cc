// The CPU backend's standard ops two ways, side by side in one run: seqrt's
// own kernel (Highway SIMD + OpenMP, `NAME/Own`) and the oneDNN primitive
// (`NAME/OneDnn`), both through the op's CPU kernel as a compiled graph runs it
// (prepare() first where the kernel has one, outputs written into buffers
// allocated once, as the planned arena does), the path forced with
// onednn::ScopedPath. Real time is what a run costs; process CPU time
// (all threads) is steadier on a shared machine, and with
// OMP_NUM_THREADS=1 it is the kernel's own work. The shapes are the benchmark
// models': BERT-MiniLM (d=384, 6 heads, seq 128/512), GPT-2 small (d=768, 12
// heads, FFN 3072, seq 512) and Mamba-130M-like (d=768, inner 1536, L=2048,
// conv k=4). The choice in ../backends/cpu/onednn/selection.cc comes from these
// numbers.
#include <benchmark/benchmark.h>

#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/onednn/selection.h"
#include "graph/builder.h"
#include "ops/registry.h"
#include "testing/random_tensor.h"

namespace seqrt {
namespace {

struct OpBench {
  std::string op;
  std::vector<Tensor> inputs;
  std::vector<bool> constant;  // inputs held as graph constants
  AttrMap attrs;
};

// One node of `b.op` over `b.inputs`, run `path`'s way on the same
// preallocated outputs every iteration.
void run_op(benchmark::State& state, const OpBench& b, cpu::onednn::Path path) {
  cpu::onednn::ScopedPath forced(path);
  GraphBuilder builder("bench");
  std::vector<ValueId> ids;
  for (size_t i = 0; i < b.inputs.size(); ++i) {
    std::string name = "in" + std::to_string(i);
    const Tensor& t = b.inputs[i];
    ids.push_back(
        i < b.constant.size() && b.constant[i]
            ? builder.constant(name, t)
            : builder.input(name, t.dtype(), Shape::from_dims(t.dims())));
  }
  builder.output(builder.add(b.op, ids, b.attrs), "out");
  Result<Graph> graph = std::move(builder).build();
  const cpu::CpuKernel* kernel = cpu::kernel_table().find(kOnnxDomain, b.op);
  const OpSchema* schema = OpRegistry::global().find(kOnnxDomain, b.op);
  if (!graph.is_ok() || kernel == nullptr || schema == nullptr) {
    state.SkipWithError(graph.is_ok() ? "no CPU kernel"
                                      : graph.status().to_string().c_str());
    return;
  }
  const Node& node = graph->nodes.front();
  KernelFn run = kernel->run;
  if (kernel->prepare) {
    Result<KernelFn> prepared = kernel->prepare(*graph, node);
    if (!prepared.is_ok()) {
      state.SkipWithError(prepared.status().to_string().c_str());
      return;
    }
    run = *prepared;
  }
  std::vector<const Tensor*> args;
  for (const Tensor& t : b.inputs) args.push_back(&t);
  std::vector<Tensor> outputs;
  auto once = [&]() -> Status {
    KernelContext ctx(node, *schema, args);
    if (!outputs.empty()) {
      ctx.set_output_placer([&](size_t i, DType, const std::vector<int64_t>&) {
        return outputs[i];
      });
    }
    SEQRT_RETURN_IF_ERROR(run(ctx));
    if (outputs.empty()) outputs = ctx.outputs();
    benchmark::DoNotOptimize(ctx.outputs());
    return Status::ok();
  };
  Status warm = once();  // allocates the outputs and creates the primitive
  if (!warm.is_ok()) {
    state.SkipWithError(warm.to_string().c_str());
    return;
  }
  for (auto _ : state) {
    Status status = once();
    if (!status.is_ok()) {
      state.SkipWithError(status.to_string().c_str());
      return;
    }
  }
  int64_t bytes = 0;
  for (const Tensor& t : b.inputs) bytes += static_cast<int64_t>(t.byte_size());
  for (const Tensor& t : outputs) bytes += static_cast<int64_t>(t.byte_size());
  state.SetBytesProcessed(state.iterations() * bytes);
}

Tensor uniform(std::vector<int64_t> dims, uint32_t seed, float lo = -1.0f,
               float hi = 1.0f) {
  return random_uniform_f32(std::move(dims), seed, lo, hi);
}

// Registers `name`/Own and `name`/OneDnn next to each other.
void add_pair(const std::string& name, OpBench b) {
  for (auto [suffix, path] :
       {std::pair{"/Own", cpu::onednn::Path::kOwn},
        std::pair{"/OneDnn", cpu::onednn::Path::kOneDnn}}) {
    benchmark::RegisterBenchmark(
        (name + suffix).c_str(),
        [b, path = path](benchmark::State& s) { run_op(s, b, path); })
        ->Unit(benchmark::kMicrosecond)
        ->MeasureProcessCPUTime()
        ->UseRealTime();
  }
}

void register_all() {
  uint32_t seed = 1;
  // Attention scores: BERT-MiniLM (6 heads) at seq 128 and 512, GPT-2
  // (12 heads) at 512.
  for (auto dims : {std::vector<int64_t>{1, 6, 128, 128},
                    std::vector<int64_t>{1, 6, 512, 512},
                    std::vector<int64_t>{1, 12, 512, 512}}) {
    std::string shape = std::to_string(dims[1]) + "x" + std::to_string(dims[2]);
    add_pair("Softmax/" + shape, {"Softmax", {uniform(dims, ++seed, -8, 8)}});
  }
  add_pair("LogSoftmax/512x8192",
           {"LogSoftmax", {uniform({512, 8192}, ++seed, -8, 8)}});
  // LayerNorm: BERT-MiniLM d=384 at 128 and 512 tokens, GPT-2 d=768.
  for (auto [t, d] :
       {std::pair{128, 384}, std::pair{512, 384}, std::pair{512, 768}}) {
    add_pair("LayerNorm/" + std::to_string(t) + "x" + std::to_string(d),
             {"LayerNormalization",
              {uniform({1, t, d}, ++seed, -2, 2), uniform({d}, ++seed),
               uniform({d}, ++seed)},
              {false, true, true},
              {{"axis", int64_t{-1}}}});
  }
  // Activations: FFN hidden of BERT-MiniLM (128x1536) and GPT-2
  // (512x3072); Mamba's gate (2048x1536) and dt (2048x48).
  add_pair("Gelu/128x1536", {"Gelu", {uniform({1, 128, 1536}, ++seed, -4, 4)}});
  add_pair("Gelu/512x3072", {"Gelu", {uniform({1, 512, 3072}, ++seed, -4, 4)}});
  add_pair("GeluTanh/512x3072", {"Gelu",
                                 {uniform({1, 512, 3072}, ++seed, -4, 4)},
                                 {},
                                 {{"approximate", std::string("tanh")}}});
  add_pair("Relu/512x3072", {"Relu", {uniform({1, 512, 3072}, ++seed)}});
  add_pair("Tanh/512x3072", {"Tanh", {uniform({1, 512, 3072}, ++seed, -4, 4)}});
  add_pair("Sigmoid/2048x1536",
           {"Sigmoid", {uniform({1, 2048, 1536}, ++seed, -6, 6)}});
  add_pair("Exp/6x512x512",
           {"Exp", {uniform({1, 6, 512, 512}, ++seed, -8, 0)}});
  add_pair("Softplus/2048x48",
           {"Softplus", {uniform({1, 2048, 48}, ++seed, -6, 6)}});
  add_pair("Sqrt/512x768", {"Sqrt", {uniform({1, 512, 768}, ++seed, 0, 4)}});
  add_pair("Log/512x768", {"Log", {uniform({1, 512, 768}, ++seed, 0.1f, 4)}});
  add_pair("Abs/512x3072", {"Abs", {uniform({1, 512, 3072}, ++seed)}});
  add_pair("Neg/512x3072", {"Neg", {uniform({1, 512, 3072}, ++seed)}});
  add_pair("Reciprocal/512x768",
           {"Reciprocal", {uniform({1, 512, 768}, ++seed, 0.5f, 4)}});
  // One decode token: where a primitive call's fixed cost shows.
  add_pair("Decode/Softmax/12x1x512",
           {"Softmax", {uniform({1, 12, 1, 512}, ++seed, -8, 8)}});
  add_pair("Decode/LayerNorm/1x768",
           {"LayerNormalization",
            {uniform({1, 1, 768}, ++seed, -2, 2), uniform({768}, ++seed),
             uniform({768}, ++seed)},
            {false, true, true}});
  add_pair("Decode/Gelu/1x3072", {"Gelu", {uniform({1, 1, 3072}, ++seed)}});
  add_pair("Decode/Sigmoid/1x1536",
           {"Sigmoid", {uniform({1, 1, 1536}, ++seed)}});
  add_pair("Decode/ReduceMax/12x1x512",
           {"ReduceMax",
            {uniform({1, 12, 1, 512}, ++seed),
             Tensor::from_vector<int64_t>({1}, {-1})},
            {false, true}});
  add_pair("Decode/Transpose/1x12x64",
           {"Transpose",
            {uniform({1, 1, 12, 64}, ++seed)},
            {},
            {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}});
  add_pair(
      "Decode/ConvDepthwise1d/1536xL4",
      {"Conv",
       {uniform({1, 1536, 4}, ++seed), uniform({1536, 1, 4}, ++seed),
        uniform({1536}, ++seed)},
       {false, true, true},
       {{"group", int64_t{1536}}, {"kernel_shape", std::vector<int64_t>{4}}}});
  // Binary: a residual add, a bias add (row broadcast), Mamba's gating
  // product and the attention-score scaling by a scalar.
  add_pair("AddSame/512x768",
           {"Add",
            {uniform({1, 512, 768}, ++seed), uniform({1, 512, 768}, ++seed)}});
  add_pair("AddRow/512x3072",
           {"Add", {uniform({1, 512, 3072}, ++seed), uniform({3072}, ++seed)}});
  add_pair("MulSame/2048x1536", {"Mul",
                                 {uniform({1, 2048, 1536}, ++seed),
                                  uniform({1, 2048, 1536}, ++seed)}});
  add_pair(
      "DivScalar/6x512x512",
      {"Div", {uniform({1, 6, 512, 512}, ++seed), uniform({1}, ++seed, 2, 3)}});
  // Reductions: a norm's mean over d (last axis) and a sum over keys.
  const Tensor last_axis = Tensor::from_vector<int64_t>({1}, {-1});
  add_pair("ReduceMean/512x768", {"ReduceMean",
                                  {uniform({1, 512, 768}, ++seed), last_axis},
                                  {false, true}});
  add_pair("ReduceSum/6x512x512",
           {"ReduceSum",
            {uniform({1, 6, 512, 512}, ++seed), last_axis},
            {false, true}});
  add_pair("ReduceMax/6x512x512",
           {"ReduceMax",
            {uniform({1, 6, 512, 512}, ++seed), last_axis},
            {false, true}});
  add_pair("ReduceMin/6x512x512",
           {"ReduceMin",
            {uniform({1, 6, 512, 512}, ++seed), last_axis},
            {false, true}});
  // Transposes: GPT-2's head split (512,12,64) -> (12,512,64) and Mamba's
  // (L, D) -> (D, L) around its conv.
  add_pair("Transpose/heads_512x12x64",
           {"Transpose",
            {uniform({1, 512, 12, 64}, ++seed)},
            {},
            {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}});
  add_pair("Transpose/2048x1536", {"Transpose",
                                   {uniform({1, 2048, 1536}, ++seed)},
                                   {},
                                   {{"perm", std::vector<int64_t>{0, 2, 1}}}});
  // Concat: a KV cache grown by a 512-token chunk; q, k, v side by side.
  add_pair("Concat/kv_12x512x64", {"Concat",
                                   {uniform({1, 12, 512, 64}, ++seed),
                                    uniform({1, 12, 512, 64}, ++seed)},
                                   {},
                                   {{"axis", int64_t{2}}}});
  add_pair("Concat/qkv_512x768",
           {"Concat",
            {uniform({1, 512, 768}, ++seed), uniform({1, 512, 768}, ++seed),
             uniform({1, 512, 768}, ++seed)},
            {},
            {{"axis", int64_t{-1}}}});
  // Mamba's depthwise causal conv1d (D=1536, k=4, pads 3 both sides as
  // PyTorch exports it, weights and bias constant) at L=2048 and a short
  // prompt; a Whisper-tiny-like front conv (80 -> 384, k=3) at 3000 frames.
  for (int64_t l : {2048, 128}) {
    add_pair("ConvDepthwise1d/1536xL" + std::to_string(l),
             {"Conv",
              {uniform({1, 1536, l}, ++seed), uniform({1536, 1, 4}, ++seed),
               uniform({1536}, ++seed)},
              {false, true, true},
              {{"group", int64_t{1536}},
               {"pads", std::vector<int64_t>{3, 3}},
               {"kernel_shape", std::vector<int64_t>{4}}}});
  }
  add_pair("Conv1d/80to384xL3000",
           {"Conv",
            {uniform({1, 80, 3000}, ++seed), uniform({384, 80, 3}, ++seed),
             uniform({384}, ++seed)},
            {false, true, true},
            {{"pads", std::vector<int64_t>{1, 1}},
             {"kernel_shape", std::vector<int64_t>{3}}}});
  add_pair("Conv2d/64x56x56_3x3",
           {"Conv",
            {uniform({1, 64, 56, 56}, ++seed), uniform({64, 64, 3, 3}, ++seed),
             uniform({64}, ++seed)},
            {false, true, true},
            {{"pads", std::vector<int64_t>{1, 1, 1, 1}},
             {"kernel_shape", std::vector<int64_t>{3, 3}}}});
}

}  // namespace
}  // namespace seqrt

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  seqrt::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
