// ONNX models through the CLI: run directly, convert to .seqrt and run
// again (identical outputs), TensorProto (.pb) inputs and outputs.
#include <sys/stat.h>

#include <string>

#include <gtest/gtest.h>

#include "importers/onnx/onnx_test_util.h"
#include "importers/onnx/tensor_proto.h"
#include "importers/tensor/npy.h"
#include "tests/e2e/cli_runner.h"

namespace seqrt::e2e {
namespace {

using namespace onnx_test;  // NOLINT: test helpers
using onnx::TensorProto;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Each test gets its own folder: ctest runs tests in parallel.
std::string test_dir(const std::string& name) {
  std::string dir = sample_dir() + "/onnx_" + name;
  mkdir(dir.c_str(), 0755);
  return dir;
}

// y = relu(x @ w + b) at opset 13, with ReduceMean's axes attribute form
// for a second output m = mean(y, axis 1).
std::string write_mlp(const std::string& dir) {
  onnx::ModelProto model = make_model(13);
  auto& g = *model.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {"batch", 3});
  add_float_initializer(g, "w", {3, 2}, {1, -1, 2, 0.5f, -3, 1});
  add_float_initializer(g, "b", {2}, {0.25f, -0.5f});
  add_node(g, "MatMul", {"x", "w"}, {"xw"}, "matmul");
  add_node(g, "Add", {"xw", "b"}, {"pre"}, "add");
  add_node(g, "Relu", {"pre"}, {"y"}, "relu");
  set_ints_attr(add_node(g, "ReduceMean", {"y"}, {"m"}, "mean"), "axes", {1});
  add_output(g, "y", TensorProto::FLOAT, {"batch", 2});
  add_output(g, "m", TensorProto::FLOAT, {"batch", 1});
  std::string path = dir + "/mlp.onnx";
  write_bytes(path, serialize(model));
  return path;
}

Tensor read_npy(const std::string& path) {
  Result<Tensor> tensor = read_npy_file(path);
  EXPECT_TRUE(tensor.is_ok()) << tensor.status().message();
  return tensor.is_ok() ? *tensor : Tensor();
}

TEST(onnx_e2e, RunConvertAndRunAgainGiveIdenticalOutputs) {
  std::string dir = test_dir("roundtrip");
  std::string model = write_mlp(dir);
  Tensor x = Tensor::from_vector<float>({2, 3}, {1, 2, 3, -1, 0.5f, 2});
  ASSERT_TRUE(write_tensor_pb_file(x, "x", dir + "/x.pb").is_ok());
  ASSERT_TRUE(write_npy_file(x, dir + "/x.npy").is_ok());

  CommandResult direct =
      run_seqrt({"run", model, "--input", "x=" + dir + "/x.pb", "--output-dir",
                 dir + "/out_onnx", "--pb"});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  EXPECT_TRUE(contains(direct.out, "wrote " + dir + "/out_onnx/y.pb"))
      << direct.out;

  std::string converted = dir + "/mlp.seqrt";
  CommandResult convert = run_seqrt({"convert", model, converted});
  ASSERT_EQ(convert.exit_code, 0) << convert.err;
  EXPECT_TRUE(contains(convert.out, "wrote " + converted)) << convert.out;

  CommandResult again =
      run_seqrt({"run", converted, "--input", "x=" + dir + "/x.npy",
                 "--output-dir", dir + "/out_seqrt"});
  ASSERT_EQ(again.exit_code, 0) << again.err;

  for (const char* name : {"y", "m"}) {
    SCOPED_TRACE(name);
    Tensor from_onnx = read_npy(dir + "/out_onnx/" + name + ".npy");
    Tensor from_seqrt = read_npy(dir + "/out_seqrt/" + name + ".npy");
    ASSERT_FALSE(from_onnx.empty());
    EXPECT_TRUE(from_onnx.same_as(from_seqrt));
    Result<Tensor> pb = read_tensor_pb_file(dir + "/out_onnx/" + name + ".pb");
    ASSERT_TRUE(pb.is_ok()) << pb.status().message();
    EXPECT_TRUE(pb->same_as(from_onnx));
  }
  // relu([1,2,3] @ w + b) = relu([-3.75, 2.5]) = [0, 2.5]; mean 1.25.
  Tensor y = read_npy(dir + "/out_onnx/y.npy");
  EXPECT_EQ(y.element_f64(0), 0.0);
  EXPECT_EQ(y.element_f64(1), 2.5);
  EXPECT_EQ(read_npy(dir + "/out_onnx/m.npy").element_f64(0), 1.25);
}

// SEQRT_PROGRESS=always: a line per stage and per tenth of the weights,
// on stderr only; by default (stderr not a terminal) nothing.
TEST(onnx_e2e, ConvertShowsProgressOnlyWhenAsked) {
  std::string dir = test_dir("progress");
  std::string model = write_mlp(dir);
  CommandResult shown =
      run_program("/usr/bin/env", {"SEQRT_PROGRESS=always", SEQRT_CLI_PATH,
                                   "convert", model, dir + "/mlp.seqrt"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  for (const char* stage :
       {"[seqrt] parsing ", "[seqrt] converting weights 50% (1/2) ",
        "[seqrt] converting weights 100% (2/2) ", "[seqrt] checking types ",
        "[seqrt] writing "}) {
    EXPECT_TRUE(contains(shown.err, stage)) << stage << "\n" << shown.err;
  }
  EXPECT_FALSE(contains(shown.out, "[seqrt]")) << shown.out;
  CommandResult quiet = run_seqrt({"convert", model, dir + "/mlp2.seqrt"});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_TRUE(quiet.err.empty()) << quiet.err;
}

TEST(onnx_e2e, InspectShowsSymbolicDims) {
  std::string model = write_mlp(test_dir("inspect"));
  CommandResult inspect = run_seqrt({"inspect", model});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_TRUE(contains(inspect.out, "batch")) << inspect.out;
  EXPECT_TRUE(contains(inspect.out, "MatMul")) << inspect.out;
}

TEST(onnx_e2e, ErrorsAreOneLineNamingTheProblem) {
  std::string dir = test_dir("errors");
  onnx::ModelProto model = make_model(17);
  auto& g = *model.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {2});
  add_node(g, "Frobnicate", {"x"}, {"a"}, "f1");
  add_node(g, "Wobble", {"a"}, {"y"}, "w1");
  add_output(g, "y", TensorProto::FLOAT, {2});
  std::string path = dir + "/unsupported.onnx";
  write_bytes(path, serialize(model));
  CommandResult convert = run_seqrt({"convert", path, dir + "/out.seqrt"});
  EXPECT_EQ(convert.exit_code, 1);
  EXPECT_TRUE(contains(convert.err, "[Frobnicate] node 'f1'")) << convert.err;
  EXPECT_TRUE(contains(convert.err, "[Wobble] node 'w1'")) << convert.err;
  EXPECT_EQ(convert.err.find('\n'), convert.err.size() - 1) << convert.err;

  std::string good = write_mlp(dir);
  write_bytes(dir + "/bad.pb", "\xff\xff\xff");
  CommandResult bad_pb =
      run_seqrt({"run", good, "--input", "x=" + dir + "/bad.pb"});
  EXPECT_EQ(bad_pb.exit_code, 1);
  EXPECT_TRUE(contains(bad_pb.err, "bad.pb")) << bad_pb.err;

  Tensor x = Tensor::from_vector<float>({1, 3}, {1, 2, 3});
  ASSERT_TRUE(write_tensor_pb_file(x, "x", dir + "/x.pb").is_ok());
  CommandResult pb_alone =
      run_seqrt({"run", good, "--input", "x=" + dir + "/x.pb", "--pb"});
  EXPECT_EQ(pb_alone.exit_code, 1);
  EXPECT_TRUE(contains(pb_alone.err, "--pb needs --output-dir"))
      << pb_alone.err;
}

}  // namespace
}  // namespace seqrt::e2e
