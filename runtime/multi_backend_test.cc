#include "runtime/multi_backend.h"

#include <gtest/gtest.h>

#include "graph/builder.h"
#include "runtime/backend_registry.h"
#include "runtime/session.h"
#include "runtime/stream.h"
#include "tests/device_skip.h"

namespace seqrt {
namespace {

TEST(BackendList, ParsesNamesInOrder) {
  Result<std::vector<std::string>> names = parse_backend_list(" vulkan , cpu");
  ASSERT_TRUE(names.is_ok()) << names.status().to_string();
  EXPECT_EQ(*names, (std::vector<std::string>{"vulkan", "cpu"}));
}

TEST(BackendList, EmptyNamesAndDuplicatesAreErrors) {
  for (const char* bad : {"", ",", "vulkan,,cpu", "cpu,"}) {
    Result<std::vector<std::string>> names = parse_backend_list(bad);
    ASSERT_FALSE(names.is_ok()) << bad;
    EXPECT_NE(names.status().message().find("empty name"), std::string::npos)
        << names.status().message();
  }
  Result<std::vector<std::string>> twice = parse_backend_list("cpu,cpu");
  ASSERT_FALSE(twice.is_ok());
  EXPECT_NE(twice.status().message().find("names 'cpu' twice"),
            std::string::npos)
      << twice.status().message();
}

TEST(BackendList, AnUnknownNameIsNamed) {
  Result<std::unique_ptr<Backend>> backend =
      create_backend("reference,nosuch", {});
  ASSERT_FALSE(backend.is_ok());
  EXPECT_EQ(backend.status().code(), StatusCode::kNotFound);
  EXPECT_NE(backend.status().message().find("'nosuch'"), std::string::npos)
      << backend.status().message();
}

// x -> Relu -> CumSum (in f64) -> + past -> present, y = MatMul(present,
// m). The Vulkan kernels take no f64, so the CumSum (and its Casts) run on
// the CPU; the Relu before it, alone on
// Vulkan, would cost a round trip for one pass over x, so it joins the
// CPU's segment; the matmul after it stays on Vulkan.
Graph island_graph() {
  GraphBuilder b("island");
  ValueId x = b.input("x", DType::kF32, Shape{2, 8});
  ValueId axis = b.input("axis", DType::kI64, Shape{});
  ValueId past = b.input("past", DType::kF32, Shape{2, 8});
  ValueId m = b.constant(
      "m", Tensor::from_vector<float>({8, 3}, std::vector<float>(24, 0.25f)));
  ValueId wide =
      b.add("Cast", {b.add("Relu", {x})}, {{"to", static_cast<int64_t>(11)}});
  ValueId summed = b.add("Cast", {b.add("CumSum", {wide, axis})},
                         {{"to", static_cast<int64_t>(1)}});
  ValueId present = b.add("Add", {summed, past});
  b.output(b.add("MatMul", {present, m}), "y");
  b.output(present, "present");
  b.state_pair(past, present);
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  return std::move(graph).value();
}

std::map<std::string, Tensor> feeds(float scale) {
  std::vector<float> x(16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = scale * (float(i) - 7.5f);
  return {{"x", Tensor::from_vector<float>({2, 8}, x)},
          {"axis", Tensor::scalar<int64_t>(1)}};
}

void expect_equal(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dims(), b.dims());
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    EXPECT_NEAR(a.element_f64(i), b.element_f64(i), 1e-5) << i;
  }
}

class VulkanThenCpu : public ::testing::Test {
 protected:
  void SetUp() override { SEQRT_CREATE_BACKEND_OR_SKIP(vulkan, "vulkan"); }
  std::unique_ptr<Session> session(const std::string& backend) {
    SessionOptions options;
    options.backend = backend;
    Result<std::unique_ptr<Session>> s =
        Session::create(island_graph(), options);
    EXPECT_TRUE(s.is_ok()) << s.status().to_string();
    return s.is_ok() ? std::move(s).value() : nullptr;
  }
};

TEST_F(VulkanThenCpu, ALightNodeBesideTheCpuJoinsItAndTheRestStaysOnVulkan) {
  std::unique_ptr<Session> mixed = session("vulkan,cpu");
  std::unique_ptr<Session> cpu = session("cpu");
  ASSERT_TRUE(mixed && cpu);
  const std::string report = mixed->placement_report({});
  EXPECT_NE(report.find("2 segment(s) on [vulkan, cpu]"), std::string::npos)
      << report;
  EXPECT_NE(report.find("[CumSum]"), std::string::npos) << report;
  EXPECT_NE(report.find("[Relu]"), std::string::npos) << report;
  EXPECT_NE(report.find("moved to cpu"), std::string::npos) << report;
  std::map<std::string, Tensor> in = feeds(1.0f);
  in["past"] = Tensor::from_vector<float>({2, 8}, std::vector<float>(16, 0.5f));
  Result<std::map<std::string, Tensor>> got = mixed->run(in);
  Result<std::map<std::string, Tensor>> want = cpu->run(in);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  expect_equal(got->at("y"), want->at("y"));
  expect_equal(got->at("present"), want->at("present"));
}

TEST_F(VulkanThenCpu, AStreamWhoseStateSpansSegments) {
  std::unique_ptr<Session> mixed = session("vulkan,cpu");
  std::unique_ptr<Session> cpu = session("cpu");
  ASSERT_TRUE(mixed && cpu);
  Stream on_mixed(*mixed), on_cpu(*cpu);
  for (float scale : {1.0f, -0.5f, 2.0f}) {
    Result<std::map<std::string, Tensor>> got = on_mixed.run(feeds(scale));
    Result<std::map<std::string, Tensor>> want = on_cpu.run(feeds(scale));
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    expect_equal(got->at("y"), want->at("y"));
  }
}

TEST_F(VulkanThenCpu, ABackendAloneKeepsItsRefusal) {
  SessionOptions options;
  options.backend = "vulkan";
  Result<std::unique_ptr<Session>> alone =
      Session::create(island_graph(), options);
  ASSERT_FALSE(alone.is_ok());
  EXPECT_NE(alone.status().message().find("[CumSum]"), std::string::npos)
      << alone.status().message();
}

// y = MatMul(Reshape(x, s + zero), m): the shape is computed from data, so
// the Add runs on the CPU and the Reshape with the matmul on Vulkan, which
// records per value of the shape (a host parameter crossing as an input).
Graph host_parameter_graph() {
  GraphBuilder b("host_parameter");
  ValueId x = b.input("x", DType::kF32, Shape{2, 6});
  ValueId s = b.input("s", DType::kI64, Shape{2});
  ValueId zero = b.constant("zero", Tensor::from_vector<int64_t>({2}, {0, 0}));
  ValueId shape =
      b.add("Add", {s, zero}, {}, NodeOptions{"", kOnnxDomain, {"shape"}});
  ValueId m = b.constant(
      "m", Tensor::from_vector<float>({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}));
  b.output(b.add("MatMul", {b.add("Reshape", {x, shape}), m}), "y");
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  return std::move(graph).value();
}

TEST_F(VulkanThenCpu, AShapeComputedOnTheCpuFeedsAReshapeOnVulkan) {
  SessionOptions options;
  options.backend = "vulkan,cpu";
  Result<std::unique_ptr<Session>> mixed =
      Session::create(host_parameter_graph(), options);
  ASSERT_TRUE(mixed.is_ok()) << mixed.status().to_string();
  options.backend = "cpu";
  Result<std::unique_ptr<Session>> cpu =
      Session::create(host_parameter_graph(), options);
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
  const std::string report = (*mixed)->placement_report({});
  EXPECT_NE(report.find("2 segment(s) on [vulkan, cpu]"), std::string::npos)
      << report;
  EXPECT_NE(report.find("host parameter(s), recorded per value: shape"),
            std::string::npos)
      << report;
  std::vector<float> x(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.5f * float(i) - 2.0f;
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{3, 4}, std::vector<int64_t>{-1, 4},
        std::vector<int64_t>{3, 4}}) {
    std::map<std::string, Tensor> in = {
        {"x", Tensor::from_vector<float>({2, 6}, x)},
        {"s", Tensor::from_vector<int64_t>({2}, shape)}};
    Result<std::map<std::string, Tensor>> got = (*mixed)->run(in);
    Result<std::map<std::string, Tensor>> want = (*cpu)->run(in);
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    expect_equal(got->at("y"), want->at("y"));
  }
  // A shape the Reshape rejects fails the run naming it and the value.
  Result<std::map<std::string, Tensor>> bad =
      (*mixed)->run({{"x", Tensor::from_vector<float>({2, 6}, x)},
                     {"s", Tensor::from_vector<int64_t>({2}, {-1, -1})}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("[-1, -1]"), std::string::npos)
      << bad.status().message();
}

// If(x's sum > 0) then MatMul(x, w) else MatMul(Neg(x), w), the weight w
// a constant of the outer graph both branches capture. The condition is
// computed at run time, so the If runs on the host; each branch, a
// matmul, is partitioned again and runs on Vulkan.
Graph runtime_if_graph() {
  auto branch = [](const std::string& name, bool negate) {
    GraphBuilder g(name);
    ValueId x = g.capture("x", DType::kF32, Shape{2, 8});
    ValueId w = g.capture("w", DType::kF32, Shape{8, 3});
    ValueId in = negate ? g.add("Neg", {x}) : x;
    g.output(g.add("MatMul", {in, w}), "y_" + name);
    return std::make_shared<Graph>(std::move(g).build().value());
  };
  GraphBuilder b("runtime_if");
  ValueId x = b.input("x", DType::kF32, Shape{2, 8});
  std::vector<float> w(24);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.1f * float(i % 5) - 0.2f;
  b.constant("w", Tensor::from_vector<float>({8, 3}, w));
  ValueId sum = b.add("ReduceSum", {x}, {{"keepdims", int64_t{0}}});
  ValueId cond =
      b.add("Greater", {sum, b.constant("zero", Tensor::scalar<float>(0))});
  auto y = b.add_node("If", {cond},
                      {{"then_branch", branch("then", false)},
                       {"else_branch", branch("else", true)}},
                      1);
  b.output(y[0], "y");
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  return std::move(graph).value();
}

TEST_F(VulkanThenCpu, ARunTimeIfRunsItsBranchesOnVulkan) {
  SessionOptions options;
  options.backend = "vulkan,cpu";
  Result<std::unique_ptr<Session>> mixed =
      Session::create(runtime_if_graph(), options);
  ASSERT_TRUE(mixed.is_ok()) << mixed.status().to_string();
  options.backend = "cpu";
  Result<std::unique_ptr<Session>> cpu =
      Session::create(runtime_if_graph(), options);
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
  const std::string report = (*mixed)->placement_report({});
  EXPECT_NE(report.find("its If runs on the host, each branch partitioned "
                        "again"),
            std::string::npos)
      << report;
  // Each branch: one Vulkan segment holding the weight; x in, y out.
  EXPECT_NE(report.find("then branch: 1 segment(s) on [vulkan, cpu]; 88 "
                        "bytes cross"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("else branch: 1 segment(s)"), std::string::npos)
      << report;
  EXPECT_NE(report.find("1 constant(s) held"), std::string::npos) << report;
  // Positive x takes the then branch, negative x the else branch.
  for (float sign : {1.0f, -1.0f}) {
    std::vector<float> x(16);
    for (size_t i = 0; i < x.size(); ++i) x[i] = sign * 0.1f * float(i + 1);
    std::map<std::string, Tensor> in = {
        {"x", Tensor::from_vector<float>({2, 8}, x)}};
    Result<std::map<std::string, Tensor>> got = (*mixed)->run(in);
    Result<std::map<std::string, Tensor>> want = (*cpu)->run(in);
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    expect_equal(got->at("y"), want->at("y"));
  }
}

}  // namespace
}  // namespace seqrt
