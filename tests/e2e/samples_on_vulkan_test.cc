// Every sample model through `seqrt run --backend vulkan` (lavapipe in CI)
// against `--backend cpu` on the same inputs: the tiny MLP and recurrent
// samples, the three Titans blocks and the Austen demo (Mamba, attention with
// a KV cache and Titans memory), fusion passes on as a user runs them.
#include <cmath>
#include <cstdlib>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "importers/native/reader.h"
#include "importers/tensor/npy.h"
#include "runtime/backend_registry.h"
#include "tests/device_skip.h"
#include "tests/e2e/cli_runner.h"

namespace seqrt::e2e {
namespace {

struct SampleCase {
  std::string name;
  std::string model;  // a file of samples_dir(), or an absolute path
  std::map<std::string, int64_t> dims;       // symbolic dims of the inputs
  std::map<std::string, int64_t> int_range;  // integer inputs: values < this
};

// gtest prints the case by its name, not its bytes.
void PrintTo(const SampleCase& sample, std::ostream* out) {
  *out << sample.name;
}

// Deterministic values: f32 in [-0.5, 0.5], integers cycling below their
// range (0 when the input has none, as for a position).
Tensor make_input(const Value& value, const SampleCase& sample) {
  std::vector<int64_t> dims;
  for (const Dim& dim : value.shape->dims()) {
    if (dim.is_fixed()) {
      dims.push_back(dim.value());
      continue;
    }
    auto it = sample.dims.find(dim.symbol_name());
    EXPECT_NE(it, sample.dims.end())
        << value.name << ": no size for " << dim.symbol_name();
    dims.push_back(it == sample.dims.end() ? 1 : it->second);
  }
  Result<Tensor> tensor = Tensor::allocate(value.dtype, dims);
  EXPECT_TRUE(tensor.is_ok()) << tensor.status().message();
  auto range = sample.int_range.find(value.name);
  for (int64_t i = 0; i < tensor->num_elements(); ++i) {
    if (value.dtype == DType::kF32) {
      tensor->set_element_f64(i, 0.5 * std::sin(0.37 * double(i) + 1.0));
    } else if (range != sample.int_range.end()) {
      tensor->set_element_i64(i, (i * 7 + 3) % range->second);
    }
  }
  return *tensor;
}

// Writes every graph input to DIR/<name>.npy and returns the --input args.
std::vector<std::string> write_inputs(const Graph& graph,
                                      const SampleCase& sample,
                                      const std::string& dir) {
  std::vector<std::string> args;
  for (ValueId id : graph.inputs) {
    const Value& value = graph.value(id);
    const std::string path = dir + "/" + value.name + ".npy";
    EXPECT_TRUE(write_npy_file(make_input(value, sample), path).is_ok());
    args.insert(args.end(), {"--input", value.name + "=" + path});
  }
  return args;
}

void run_on(const std::string& backend, const SampleCase& sample,
            const std::string& model, std::vector<std::string> args,
            const std::string& out_dir) {
  args.insert(args.begin(), {"run", model, "--backend", backend});
  args.insert(args.end(), {"--output-dir", out_dir});
  CommandResult run = run_seqrt(args);
  ASSERT_EQ(run.exit_code, 0)
      << sample.name << " on " << backend << ": " << run.err;
}

// Element-wise |vulkan - cpu| <= atol + rtol |cpu|, integers exactly.
void expect_outputs_match(const Graph& graph, const std::string& cpu_dir,
                          const std::string& vulkan_dir, double atol = 1e-4,
                          double rtol = 1e-3) {
  for (ValueId id : graph.outputs) {
    const std::string file = "/" + graph.value(id).name + ".npy";
    Result<Tensor> cpu = read_npy_file(cpu_dir + file);
    Result<Tensor> vulkan = read_npy_file(vulkan_dir + file);
    ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
    ASSERT_TRUE(vulkan.is_ok()) << vulkan.status().message();
    ASSERT_EQ(cpu->dtype(), vulkan->dtype()) << file;
    ASSERT_EQ(cpu->dims(), vulkan->dims()) << file;
    double worst = 0.0;
    int64_t mismatches = 0;
    for (int64_t i = 0; i < cpu->num_elements(); ++i) {
      const double want = cpu->element_f64(i);
      const double diff = std::abs(vulkan->element_f64(i) - want);
      worst = std::max(worst, diff);
      const bool exact = !is_float(cpu->dtype());
      if (exact ? diff != 0.0 : !(diff <= atol + rtol * std::abs(want))) {
        ++mismatches;
      }
    }
    EXPECT_EQ(mismatches, 0) << file << ": worst |vulkan - cpu| = " << worst;
  }
}

// sample_dir() (which holds the tiny MLP) with the other samples written
// by their make_* programs, once per test process.
const std::string& samples_dir() {
  static const std::string dir = [] {
    const std::string& d = sample_dir();
    EXPECT_EQ(run_program(SEQRT_MAKE_TINY_RECURRENT_PATH, {d}).exit_code, 0);
    EXPECT_EQ(run_program(SEQRT_MAKE_TITANS_PATH, {d}).exit_code, 0);
    return d;
  }();
  return dir;
}

class SamplesOnVulkan : public testing::TestWithParam<SampleCase> {};

// Runs the sample on cpu and on vulkan (with SEQRT_VULKAN_FP16_WEIGHTS=1
// when `fp16_weights`) and compares within atol + rtol |cpu|.
void check_sample(const SampleCase& sample, bool fp16_weights, double atol,
                  double rtol) {
  const std::string model = sample.model[0] == '/'
                                ? sample.model
                                : samples_dir() + "/" + sample.model;
  Result<Graph> graph = read_seqrt_file(model);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const std::string dir = samples_dir() + "/on_vulkan_" + sample.name +
                          (fp16_weights ? "_fp16" : "");
  for (const char* sub : {"", "/cpu", "/vulkan"}) {
    ASSERT_EQ(run_program("/bin/mkdir", {"-p", dir + sub}).exit_code, 0);
  }
  std::vector<std::string> inputs = write_inputs(*graph, sample, dir);
  run_on("cpu", sample, model, inputs, dir + "/cpu");
  if (fp16_weights) setenv("SEQRT_VULKAN_FP16_WEIGHTS", "1", 1);
  run_on("vulkan", sample, model, inputs, dir + "/vulkan");
  unsetenv("SEQRT_VULKAN_FP16_WEIGHTS");
  expect_outputs_match(*graph, dir + "/cpu", dir + "/vulkan", atol, rtol);
}

TEST_P(SamplesOnVulkan, MatchTheCpuBackend) {
  SEQRT_CREATE_BACKEND_OR_SKIP(vulkan, "vulkan");
  check_sample(GetParam(), false, 1e-4, 1e-3);
}

// With the product weights stored as fp16 (each rounded by up to 2^-11 of
// itself), the outputs stay within a few parts in a thousand.
TEST_P(SamplesOnVulkan, MatchTheCpuBackendWithFp16Weights) {
  SEQRT_CREATE_BACKEND_OR_SKIP(vulkan, "vulkan");
  check_sample(GetParam(), true, 1e-2, 1e-2);
}

std::vector<SampleCase> sample_cases() {
  std::vector<SampleCase> cases = {
      {"tiny_mlp",
       "tiny_mlp.seqrt",
       {{"batch", 2}, {"seq", 8}},
       {{"tokens", 64}}},
      {"tiny_recurrent", "tiny_recurrent.seqrt", {{"seq", 40}}, {}},
      {"austen",
       SEQRT_DEMO_MODEL,
       {{"seq", 24}, {"past_len", 0}},
       {{"tokens", 80}}},
  };
  for (const char* block : {"mac", "mag", "mal"}) {
    cases.push_back({std::string("titans_") + block,
                     std::string("titans_") + block + ".seqrt",
                     {},
                     {}});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Samples, SamplesOnVulkan,
                         testing::ValuesIn(sample_cases()),
                         [](const testing::TestParamInfo<SampleCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace seqrt::e2e
