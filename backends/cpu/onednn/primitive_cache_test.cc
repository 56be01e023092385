// The primitive cache (hits, misses, eviction, failed creation, keys that
// tell problems apart) and the compile-time preparation of constant
// weights: the reorder happens once, in prepare(), and runs only hit the
// cache unless M changes.
#include <gtest/gtest.h>

#include <thread>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/kernel_test_util.h"
#include "backends/cpu/onednn/engine.h"
#include "backends/cpu/onednn/matmul.h"
#include "backends/cpu/onednn/packed_weights.h"
#include "backends/cpu/onednn/primitive_cache.h"
#include "backends/cpu/parallel.h"
#include "graph/builder.h"
#include "ops/registry.h"

namespace seqrt::cpu::onednn {
namespace {

using kernel_testing::expect_close;
using kernel_testing::uniform;

Result<CachedPrimitive> made_primitive(int* calls) {
  ++*calls;
  return CachedPrimitive{};
}

TEST(PrimitiveCache, HitsMissesAndEvictsLeastRecentlyUsed) {
  PrimitiveCache cache(2);
  int calls = 0;
  auto make = [&] { return made_primitive(&calls); };
  ASSERT_TRUE(cache.get("a", make).is_ok());
  ASSERT_TRUE(cache.get("b", make).is_ok());
  ASSERT_TRUE(cache.get("a", make).is_ok());  // hit; "b" is now the oldest
  ASSERT_TRUE(cache.get("c", make).is_ok());  // evicts "b"
  EXPECT_EQ(calls, 3);
  ASSERT_TRUE(cache.get("a", make).is_ok());
  EXPECT_EQ(calls, 3);
  ASSERT_TRUE(cache.get("b", make).is_ok());
  EXPECT_EQ(calls, 4);
  CacheStats stats = cache.stats();
  EXPECT_EQ(stats.hits, 2);
  EXPECT_EQ(stats.misses, 4);
  EXPECT_EQ(stats.size, 2u);
}

TEST(PrimitiveCache, FailedCreationIsNotCached) {
  PrimitiveCache cache(4);
  int calls = 0;
  auto fail = [&]() -> Result<CachedPrimitive> {
    ++calls;
    return internal_error("no primitive");
  };
  EXPECT_FALSE(cache.get("x", fail).is_ok());
  EXPECT_FALSE(cache.get("x", fail).is_ok());
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(cache.stats().size, 0u);
}

TEST(PrimitiveCache, KeepsOnePrimitivePerThreadCount) {
  PrimitiveCache cache(4);
  int calls = 0;
  auto make = [&] { return made_primitive(&calls); };
  {
    ScopedThreads one(1);
    ASSERT_TRUE(cache.get("a", make).is_ok());
  }
  {
    ScopedThreads two(2);
    ASSERT_TRUE(cache.get("a", make).is_ok());
    ASSERT_TRUE(cache.get("a", make).is_ok());
  }
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(cache.stats().hits, 1);
}

MatmulProblem problem(int64_t m, Activation activation) {
  MatmulProblem p;
  p.src_dims = {m, 64};
  p.weights_dims = {64, 96};
  p.packed_weights = true;
  p.dst_dims = {m, 96};
  p.bias = true;
  p.activation = activation;
  return p;
}

TEST(MatmulPrimitive, KeysTellProblemsApart) {
  EXPECT_EQ(problem(8, Activation::kRelu).key(),
            problem(8, Activation::kRelu).key());
  EXPECT_NE(problem(8, Activation::kRelu).key(),
            problem(8, Activation::kGelu).key());
  EXPECT_NE(problem(8, Activation::kRelu).key(),
            problem(9, Activation::kRelu).key());
  MatmulProblem scaled = problem(8, Activation::kNone);
  scaled.alpha = 0.5f;
  EXPECT_NE(scaled.key(), problem(8, Activation::kNone).key());
  MatmulProblem summed = problem(8, Activation::kNone);
  summed.sum_scale = 1.0f;
  EXPECT_NE(summed.key(), problem(8, Activation::kNone).key());
}

TEST(MatmulPrimitive, CreatesAndCachesThroughTheSharedCache) {
  MatmulProblem p = problem(5, Activation::kSilu);
  CacheStats before = primitive_cache().stats();
  auto first = matmul_primitive(p, "[test]");
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  ASSERT_TRUE((*first)->available());
  auto second = matmul_primitive(p, "[test]");
  ASSERT_TRUE(second.is_ok());
  EXPECT_EQ(first->get(), second->get());
  CacheStats after = primitive_cache().stats();
  EXPECT_GE(after.hits - before.hits, 1);
}

// A Linear node with constant W (K, N) on a fixed-shape X (rows, K).
struct LinearNode {
  Graph graph;
  const Node* node = nullptr;
};

LinearNode linear_node(int64_t rows, int64_t k, const Tensor& w,
                       const Tensor& b) {
  GraphBuilder builder("linear");
  ValueId x = builder.input("x", DType::kF32, {rows, k});
  ValueId wv = builder.constant("w", w);
  ValueId bv = builder.constant("b", b);
  NodeOptions options;
  options.domain = kSeqrtDomain;
  builder.output(builder.add("Linear", {x, wv, bv},
                             {{"activation", std::string("gelu")}}, options),
                 "y");
  LinearNode result{std::move(builder).build().value()};
  result.node = &result.graph.nodes.front();
  return result;
}

Result<Tensor> run(const KernelFn& fn, const Node& node, const Tensor& x,
                   const Tensor& w, const Tensor& b) {
  const OpSchema* schema = OpRegistry::global().find(kSeqrtDomain, "Linear");
  KernelContext ctx(node, *schema, {&x, &w, &b});
  SEQRT_RETURN_IF_ERROR(fn(ctx));
  return ctx.outputs()[0];
}

TEST(PreparedLinear, ReordersWeightsOnceAtCompileAndHitsTheCacheAfter) {
  const int64_t rows = 48, k = 256, n = 384;
  Tensor w = uniform({k, n}, 1), b = uniform({n}, 2);
  LinearNode linear = linear_node(rows, k, w, b);
  const CpuKernel* kernel = kernel_table().find(kSeqrtDomain, "Linear");
  ASSERT_NE(kernel, nullptr);
  ASSERT_TRUE(kernel->prepare);

  // Whether oneDNN wants these weights in a blocked layout (it does on
  // AVX2/AVX-512 machines); a plain layout needs no reorder at all.
  MatmulProblem p;
  p.src_dims = {rows, k};
  p.weights_dims = {k, n};
  p.packed_weights = true;
  p.dst_dims = {rows, n};
  p.bias = true;
  p.activation = Activation::kGelu;
  auto primitive = matmul_primitive(p, "[test]");
  ASSERT_TRUE(primitive.is_ok());
  const int64_t expected_reorders =
      (*primitive)->weights == f32_desc({k, n}) ? 0 : 1;

  int64_t reorders = weight_reorder_count();
  Result<KernelFn> prepared = kernel->prepare(linear.graph, *linear.node);
  ASSERT_TRUE(prepared.is_ok()) << prepared.status().to_string();
  EXPECT_EQ(weight_reorder_count() - reorders, expected_reorders);

  Tensor x = uniform({rows, k}, 3);
  KernelFn reference =
      OpRegistry::global().find(kSeqrtDomain, "Linear")->reference;
  Result<Tensor> want = run(reference, *linear.node, x, w, b);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  CacheStats before = primitive_cache().stats();
  for (int i = 0; i < 3; ++i) {
    Result<Tensor> got = run(*prepared, *linear.node, x, w, b);
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    expect_close(*got, *want, 1e-4);
  }
  CacheStats after = primitive_cache().stats();
  EXPECT_EQ(after.misses - before.misses, 0);  // prepare made the primitive
  EXPECT_EQ(after.hits - before.hits, 3);
  EXPECT_EQ(weight_reorder_count() - reorders, expected_reorders);

  // Another M is another primitive: one miss, then hits.
  Tensor x7 = uniform({7, k}, 4);
  before = primitive_cache().stats();
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(run(*prepared, *linear.node, x7, w, b).is_ok());
  }
  after = primitive_cache().stats();
  EXPECT_EQ(after.misses - before.misses, 1);
  EXPECT_EQ(after.hits - before.hits, 1);
}

// Through the backend as a Session drives it: compile() prepares the node.
// M is symbolic, so the weights are packed for the 128-row hint; the first
// run with M = 24 makes that primitive (one miss), every later run hits.
TEST(PreparedLinear, CompiledGraphHitsTheCacheOnEveryRun) {
  const int64_t k = 64, n = 80;
  Tensor w = uniform({k, n}, 6), b = uniform({n}, 7);
  GraphBuilder builder("linear");
  ValueId x = builder.input("x", DType::kF32, {Dim::symbol("m"), Dim(k)});
  NodeOptions options;
  options.domain = kSeqrtDomain;
  builder.output(
      builder.add("Linear",
                  {x, builder.constant("w", w), builder.constant("b", b)},
                  {{"activation", std::string("relu")}}, options),
      "y");
  Graph graph = std::move(builder).build().value();
  std::unique_ptr<Backend> backend = create_cpu_backend();
  CompileOptions compile_options;
  compile_options.dim_bindings["m"] = 24;
  auto executable = backend->compile(graph, compile_options);
  ASSERT_TRUE(executable.is_ok()) << executable.status().to_string();
  CacheStats before = primitive_cache().stats();
  for (int i = 0; i < 2; ++i) {
    auto y = (*executable)->run({uniform({24, k}, 8)});
    ASSERT_TRUE(y.is_ok()) << y.status().to_string();
  }
  CacheStats after = primitive_cache().stats();
  EXPECT_EQ(after.misses - before.misses, 1);
  EXPECT_EQ(after.hits - before.hits, 1);
}

// Runs from several threads share the packed weights and the cache, each
// thread on its own stream; results stay those of the reference.
TEST(PreparedLinear, RunsFromSeveralThreadsAtOnce) {
  const int64_t k = 40, n = 56;
  Tensor w = uniform({k, n}, 9), b = uniform({n}, 10);
  LinearNode linear = linear_node(8, k, w, b);
  const CpuKernel* kernel = kernel_table().find(kSeqrtDomain, "Linear");
  Result<KernelFn> prepared = kernel->prepare(linear.graph, *linear.node);
  ASSERT_TRUE(prepared.is_ok());
  KernelFn reference =
      OpRegistry::global().find(kSeqrtDomain, "Linear")->reference;
  std::vector<Tensor> xs, want, got(8);
  for (int t = 0; t < 8; ++t) {
    xs.push_back(uniform({1 + t, k}, 20 + t));
    want.push_back(run(reference, *linear.node, xs[t], w, b).value());
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int repeat = 0; repeat < 5; ++repeat) {
        Result<Tensor> y = run(*prepared, *linear.node, xs[t], w, b);
        if (y.is_ok()) got[t] = *y;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) {
    ASSERT_FALSE(got[t].empty()) << "thread " << t;
    expect_close(got[t], want[t], 1e-4);
  }
}

// Whatever layout this machine's primitives pick, a blocked one is
// reordered once and then reused.
TEST(PackedWeights, ReordersOncePerLayout) {
  Tensor w = uniform({32, 48}, 5);
  PackedWeights packed(w, false);
  dnnl::memory::desc blocked({32, 48}, dnnl::memory::data_type::f32,
                             dnnl::memory::format_tag::BA16a64b);
  int64_t reorders = weight_reorder_count();
  auto first = packed.in_layout(blocked, "[test]");
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  auto again = packed.in_layout(blocked, "[test]");
  ASSERT_TRUE(again.is_ok());
  EXPECT_EQ(first->get_data_handle(), again->get_data_handle());
  EXPECT_EQ(weight_reorder_count() - reorders, 1);
  EXPECT_EQ(packed.num_layouts(), 1u);
  // The plain layout is the constant itself: no copy.
  auto plain = packed.in_layout(f32_desc({32, 48}), "[test]");
  ASSERT_TRUE(plain.is_ok());
  EXPECT_EQ(plain->get_data_handle(), w.data());
  EXPECT_EQ(weight_reorder_count() - reorders, 1);
  // Reordered back to plain, the values are the constant's.
  Tensor back = Tensor::allocate(DType::kF32, {32, 48}).value();
  dnnl::memory out = wrap(f32_desc({32, 48}), back.data_as<float>());
  dnnl::reorder(*first, out).execute(thread_stream(), *first, out);
  thread_stream().wait();
  expect_close(back, w, 0);
}

TEST(OnednnErrors, BecomeStatusesNamingTheNode) {
  Status status =
      guarded("[MatMul] node 'mm'", "create a matmul primitive",
              [] { throw dnnl::error(dnnl_invalid_arguments, "bad shapes"); });
  ASSERT_FALSE(status.is_ok());
  EXPECT_NE(status.to_string().find("[MatMul] node 'mm'"), std::string::npos);
  EXPECT_NE(status.to_string().find("bad shapes"), std::string::npos);
}

}  // namespace
}  // namespace seqrt::cpu::onednn
