// Imported LSTM and GRU models whose initial_h/initial_c graph inputs are
// paired with the Y_h/Y_c outputs (DESIGN.md §4): a Stream that feeds the
// sequence in chunks must give what one run over the whole sequence gives
// (OPS.md, whole equals parts), on every backend.
#include <gtest/gtest.h>

#include <random>

#include "importers/onnx/onnx_test_util.h"
#include "importers/onnx/state_pairs.h"
#include "runtime/backend_registry.h"
#include "runtime/session.h"
#include "runtime/stream.h"
#include "tests/device_skip.h"

namespace seqrt {
namespace {

using namespace onnx_test;  // NOLINT: test helpers
using onnx::TensorProto;

constexpr int64_t kBatch = 2, kInput = 3, kHidden = 5, kSeq = 9;

std::vector<float> uniform(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-0.6f, 0.6f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// x (seq, batch, input) → op with weights as initializers; the states are
// graph inputs paired with the op's final-state outputs by metadata.
onnx::ModelProto recurrent_model(const std::string& op) {
  const bool lstm = op == "LSTM";
  const int64_t gates = lstm ? 4 : 3;
  onnx::ModelProto model = make_model(17);
  auto& g = *model.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {"seq", kBatch, kInput});
  add_input(g, "h0", TensorProto::FLOAT, {1, kBatch, kHidden});
  if (lstm) add_input(g, "c0", TensorProto::FLOAT, {1, kBatch, kHidden});
  add_float_initializer(g, "W", {1, gates * kHidden, kInput},
                        uniform(gates * kHidden * kInput, 1));
  add_float_initializer(g, "R", {1, gates * kHidden, kHidden},
                        uniform(gates * kHidden * kHidden, 2));
  add_float_initializer(g, "B", {1, 2 * gates * kHidden},
                        uniform(2 * gates * kHidden, 3));
  std::vector<std::string> inputs = {"x", "W", "R", "B", "", "h0"};
  std::vector<std::string> outputs = {"y", "h"};
  if (lstm) {
    inputs.push_back("c0");
    outputs.push_back("c");
  }
  set_int_attr(add_node(g, op, inputs, outputs, "rec"), "hidden_size", kHidden);
  add_output(g, "y", TensorProto::FLOAT, {"seq", 1, kBatch, kHidden});
  add_output(g, "h", TensorProto::FLOAT, {1, kBatch, kHidden});
  if (lstm) add_output(g, "c", TensorProto::FLOAT, {1, kBatch, kHidden});
  auto* pairs = model.add_metadata_props();
  pairs->set_key(kStatePairsKey);
  pairs->set_value(lstm ? "h0:h;c0:c" : "h0:h");
  return model;
}

Tensor time_rows(const std::vector<float>& x, int64_t begin, int64_t end) {
  const int64_t row = kBatch * kInput;
  std::vector<float> part(x.begin() + begin * row, x.begin() + end * row);
  return Tensor::from_vector<float>({end - begin, kBatch, kInput}, part);
}

void expect_whole_equals_chunks(const std::string& op,
                                const std::string& backend) {
  SCOPED_TRACE(op + " on " + backend);
  Result<Graph> graph = import_model(recurrent_model(op));
  ASSERT_TRUE(graph.is_ok()) << graph.status().to_string();
  ASSERT_EQ(graph->state_pairs.size(), op == "LSTM" ? 2u : 1u);
  SessionOptions options;
  options.backend = backend;
  auto session = Session::create(std::move(graph).value(), options);
  if (!session.is_ok() &&
      device_skip::may_skip_for_no_device(backend, session.status())) {
    return;  // no device for this backend here
  }
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const std::vector<float> x = uniform(kSeq * kBatch * kInput, 4);

  Stream whole_stream(**session);
  auto whole = whole_stream.run({{"x", time_rows(x, 0, kSeq)}});
  ASSERT_TRUE(whole.is_ok()) << whole.status().to_string();
  const Tensor& y = whole->at("y");

  for (int64_t chunk : {1, 2, 4}) {
    Stream stream(**session);
    for (int64_t begin = 0; begin < kSeq; begin += chunk) {
      const int64_t end = std::min(kSeq, begin + chunk);
      auto part = stream.run({{"x", time_rows(x, begin, end)}});
      ASSERT_TRUE(part.is_ok()) << part.status().to_string();
      const Tensor& got = part->at("y");
      const int64_t row = kBatch * kHidden;
      ASSERT_EQ(got.num_elements(), (end - begin) * row);
      for (int64_t i = 0; i < got.num_elements(); ++i) {
        EXPECT_NEAR(got.element_f64(i), y.element_f64(begin * row + i), 1e-5)
            << "chunk " << chunk << " at step " << begin;
      }
    }
    // The held state is the whole run's final state.
    auto held = stream.snapshot();
    const Tensor h = whole_stream.snapshot().at("h0");
    for (int64_t i = 0; i < h.num_elements(); ++i) {
      EXPECT_NEAR(held.at("h0").element_f64(i), h.element_f64(i), 1e-5);
    }
  }
}

// Every compiled backend (Vulkan keeps the state on its device between
// runs); one without a device here is skipped.
TEST(onnx_recurrent_state, LstmAndGruStreamInChunksEqualsWhole) {
  for (const std::string& backend : compiled_backends()) {
    expect_whole_equals_chunks("LSTM", backend);
    expect_whole_equals_chunks("GRU", backend);
  }
}

}  // namespace
}  // namespace seqrt
