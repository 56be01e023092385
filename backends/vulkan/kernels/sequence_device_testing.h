// Test support for the sequence kernels on a device (gtest): devices with
// the shared-memory limit forced to 16/32/48 KiB and subgroups on or off,
// running one node's plan and record through TestRecorder, and comparing
// with the op's reference kernel at every such configuration.
#pragma once

#include <gtest/gtest.h>

#include <set>

#include "backends/vulkan/kernels/sequence_scan.h"
#include "backends/vulkan/kernels/sequence_testing.h"
#include "ops/op_test_util.h"
#include "ops/sequence/scan_test_util.h"
#include "tests/device_skip.h"

namespace seqrt::vulkan::sequence_testing {

struct DeviceConfig {
  uint32_t shared_kib;
  bool subgroup;
};

inline const DeviceConfig kConfigs[] = {{16, true},  {32, true},  {48, true},
                                        {16, false}, {32, false}, {48, false}};

// A device for the configuration, opened with the validation layers.
inline Result<std::shared_ptr<Device>> open_device(const DeviceConfig& config) {
  VulkanOptions options;
  options.shared_limit_bytes = config.shared_kib * 1024;
  options.disable_subgroup_ops = !config.subgroup;
  options.validation = true;
  return Device::open(options);
}

struct DeviceRun {
  std::vector<Tensor> outputs;
  KernelTiling tiling;
  uint32_t state_stores = 0;
  int dispatches = 0;
};

struct RunOptions {
  bool count_stores = false;                  // the scan's debug store counter
  const DeviceLimits* plan_limits = nullptr;  // plan for other limits
  std::set<size_t> constant_inputs;  // inputs the graph holds as constants
};

// Plans and records one node on `device`, runs it, reads the outputs back
// (with the dims the reference gave).
inline Result<DeviceRun> run_on_device(std::shared_ptr<Device> device,
                                       const std::string& domain,
                                       const std::string& op,
                                       const std::vector<Tensor>& inputs,
                                       const AttrMap& attrs,
                                       const std::vector<Tensor>& want,
                                       const RunOptions& options = {}) {
  auto pipelines = std::make_shared<Pipelines>(device);
  SEQRT_ASSIGN_OR_RETURN(auto recorder,
                         TestRecorder::create(device, pipelines));
  std::vector<bool> present;
  for (const Tensor& t : inputs) present.push_back(!t.empty());
  Node node = op_testing::make_node(op, attrs, present, want.size());
  node.domain = domain;
  // A graph only when some input is a constant (kernels read its values).
  Graph graph;
  NodeArgs args;
  args.node = &node;
  if (!options.constant_inputs.empty()) {
    for (size_t i = 0; i < inputs.size() + want.size(); ++i) {
      const Tensor& t = i < inputs.size() ? inputs[i] : want[i - inputs.size()];
      graph.add_value(Value{"v" + std::to_string(i), t.dtype(), t.shape()});
    }
    for (size_t i : options.constant_inputs) {
      graph.constants[static_cast<ValueId>(i)] = inputs[i];
    }
    args.graph = &graph;
  }
  for (const Tensor& t : inputs) {
    SEQRT_ASSIGN_OR_RETURN(BufferSlice slice, recorder->upload(t));
    args.inputs.push_back(slice);
    args.input_dims.push_back(t.dims());
    args.input_dtypes.push_back(t.empty() ? DType::kUndefined : t.dtype());
  }
  for (const Tensor& t : want) {
    SEQRT_ASSIGN_OR_RETURN(BufferSlice slice,
                           recorder->allocate(t.byte_size()));
    args.outputs.push_back(slice);
    args.output_dims.push_back(t.dims());
    args.output_dtypes.push_back(DType::kF32);
  }
  const VulkanKernel* kernel = kernel_table().find(domain, op);
  if (kernel == nullptr) return not_found("no Vulkan kernel for {}", op);
  DeviceRun run;
  SEQRT_ASSIGN_OR_RETURN(
      run.tiling,
      kernel->plan(args, options.plan_limits != nullptr ? *options.plan_limits
                                                        : device->limits()));
  BufferSlice counter;
  if (options.count_stores) {
    SEQRT_ASSIGN_OR_RETURN(counter, recorder->allocate(4));
    SEQRT_RETURN_IF_ERROR(
        record_selective_scan(args, run.tiling, *recorder, &counter));
  } else {
    SEQRT_RETURN_IF_ERROR(kernel->record(args, run.tiling, *recorder));
  }
  SEQRT_RETURN_IF_ERROR(recorder->run());
  for (size_t i = 0; i < want.size(); ++i) {
    SEQRT_ASSIGN_OR_RETURN(Tensor out,
                           recorder->download(args.outputs[i], want[i].dims()));
    run.outputs.push_back(std::move(out));
  }
  if (options.count_stores) run.state_stores = recorder->word(counter);
  run.dispatches = recorder->dispatches();
  return run;
}

// Reference vs device for every configuration; returns the tilings used.
inline std::vector<KernelTiling> expect_matches_reference(
    const std::string& domain, const std::string& op,
    const std::vector<Tensor>& inputs, const AttrMap& attrs, double tol,
    size_t num_outputs = 2, const RunOptions& options = {}) {
  std::vector<KernelTiling> tilings;
  auto want = scan_testing::run_op(domain, op, inputs, attrs, num_outputs);
  EXPECT_TRUE(want.is_ok()) << want.status().to_string();
  if (!want.is_ok()) return tilings;
  for (const DeviceConfig& config : kConfigs) {
    SCOPED_TRACE(testing::Message()
                 << config.shared_kib << " KiB, subgroup " << config.subgroup);
    auto device = open_device(config);
    if (!device.is_ok()) {
      ADD_FAILURE() << device.status().to_string();
      return tilings;
    }
    auto got =
        run_on_device(*device, domain, op, inputs, attrs, *want, options);
    EXPECT_TRUE(got.is_ok()) << got.status().to_string();
    if (!got.is_ok()) return tilings;
    EXPECT_LE(got->tiling.shared_bytes, config.shared_kib * 1024u);
    for (size_t i = 0; i < want->size(); ++i) {
      scan_testing::expect_close(got->outputs[i], (*want)[i], tol,
                                 "output " + std::to_string(i));
    }
    EXPECT_EQ((*device)->validation_messages(), 0)
        << ((*device)->validation_log().empty()
                ? ""
                : (*device)->validation_log().front());
    tilings.push_back(got->tiling);
  }
  return tilings;
}

// A stateful op whose sequence (axis 1 of `token_inputs`) is cut into parts:
// outputs[0] is per token and outputs[1] the state it leaves, fed back as
// input `state_input` of the next part.
struct PartsCase {
  std::string domain, op;
  AttrMap attrs;
  std::vector<size_t> token_inputs;
  size_t state_input = 0;
  double tol = 1e-4;
};

// Runs `whole` part by part on `device` (a prefill, then steps) carrying
// the state, and expects each part's tokens and the final state to equal the
// reference kernel's run over the whole sequence (OPS.md equivalences).
inline void expect_parts_equal_whole(
    const std::shared_ptr<Device>& device, const PartsCase& c,
    const std::vector<Tensor>& whole,
    const std::vector<std::pair<int64_t, int64_t>>& parts,
    const RunOptions& options = {}) {
  auto want = scan_testing::run_op(c.domain, c.op, whole, c.attrs);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  Tensor state = whole[c.state_input];
  for (auto [begin, end] : parts) {
    std::vector<Tensor> part = whole;
    for (size_t i : c.token_inputs) {
      part[i] = scan_testing::slice_axis(whole[i], 1, begin, end);
    }
    part[c.state_input] = state;
    auto want_part = scan_testing::run_op(c.domain, c.op, part, c.attrs);
    ASSERT_TRUE(want_part.is_ok()) << want_part.status().to_string();
    auto got = run_on_device(device, c.domain, c.op, part, c.attrs, *want_part,
                             options);
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    scan_testing::expect_close(
        got->outputs[0], scan_testing::slice_axis((*want)[0], 1, begin, end),
        c.tol, "tokens from " + std::to_string(begin));
    state = got->outputs[1];
  }
  scan_testing::expect_close(state, (*want)[1], c.tol, "final state");
  EXPECT_EQ(device->validation_messages(), 0);
}

// A chunked sequence op against its recurrent kernel on one device: `op`
// planned as the device allows must be chunked (`is_chunked`, in
// `dispatches` dispatches), planned as if no chunk fit it must not be, and
// outputs 0 and 1 (tokens and final state) of the two must agree within
// `tolerance`. `forms` is the chunked run's DeviceLimits::forms.
inline void expect_chunked_equals_recurrent(
    const std::string& domain, const std::string& op,
    const std::vector<Tensor>& in, const AttrMap& attrs,
    bool (*is_chunked)(const KernelTiling&), int dispatches, double tolerance,
    SequenceForms forms = SequenceForms::kAuto) {
  auto device = open_device({32, true});
  ASSERT_TRUE(device.is_ok());
  auto want = scan_testing::run_op(domain, op, in, attrs);
  ASSERT_TRUE(want.is_ok());
  DeviceLimits chunked_limits = (*device)->limits();
  chunked_limits.forms = forms;
  RunOptions chunked_options;
  chunked_options.plan_limits = &chunked_limits;
  auto chunked =
      run_on_device(*device, domain, op, in, attrs, *want, chunked_options);
  ASSERT_TRUE(chunked.is_ok()) << chunked.status().to_string();
  ASSERT_TRUE(is_chunked(chunked->tiling));
  EXPECT_EQ(chunked->dispatches, dispatches);
  // A 64-byte binding range leaves no room for chunk states.
  DeviceLimits no_chunks = (*device)->limits();
  no_chunks.max_storage_buffer_range = 64;
  RunOptions options;
  options.plan_limits = &no_chunks;
  auto recurrent =
      run_on_device(*device, domain, op, in, attrs, *want, options);
  ASSERT_TRUE(recurrent.is_ok()) << recurrent.status().to_string();
  ASSERT_FALSE(is_chunked(recurrent->tiling));
  for (size_t i = 0; i < 2; ++i) {
    scan_testing::expect_close(chunked->outputs[i], recurrent->outputs[i],
                               tolerance, "output " + std::to_string(i));
  }
  EXPECT_EQ((*device)->validation_messages(), 0);
}

// A fixture for tests that need a Vulkan device: skips (with the reason)
// only where there is none (tests/device_skip.h).
class DeviceTest : public testing::Test {
 protected:
  void SetUp() override {
    SEQRT_SKIP_IF_NO_DEVICE("vulkan", open_device({48, true}).status());
  }
};

}  // namespace seqrt::vulkan::sequence_testing
