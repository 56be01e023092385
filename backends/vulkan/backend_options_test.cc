// The Vulkan backend opened with BackendOptions through the registry and a
// Session, as the C API, Python and the CLI open it: each key reaches the
// device, a bad key or value fails naming it, and the SEQRT_VULKAN_*
// variables override the options.
#include <cstdlib>
#include <cstring>
#include <optional>

#include <gtest/gtest.h>

#include "backends/vulkan/test_util.h"
#include "graph/builder.h"
#include "runtime/backend_registry.h"
#include "runtime/session.h"
#include "testing/random_tensor.h"

namespace seqrt::vulkan {
namespace {

// Sets (or unsets, with nullopt) one variable for the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    const char* old = std::getenv(name);
    if (old != nullptr) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

bool has(const Status& status, const std::string& text) {
  return status.message().find(text) != std::string::npos;
}

// y = x @ w, with weights that fp16 storage rounds.
Graph matmul_graph() {
  GraphBuilder b("matmul");
  ValueId x = b.input("x", DType::kF32, Shape{4, 40});
  ValueId w = b.constant("w", random_uniform_f32({40, 24}, 7, -0.3f, 0.3f));
  b.output(b.add("MatMul", {x, w}), "y");
  return std::move(b).build().value();
}

// y on the Vulkan backend opened with `options`; the error otherwise.
Result<Tensor> run_y(const BackendOptions& options) {
  SessionOptions session_options;
  session_options.backend = "vulkan";
  session_options.backend_options = options;
  SEQRT_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                         Session::create(matmul_graph(), session_options));
  SEQRT_ASSIGN_OR_RETURN(auto outputs,
                         session->run({{"x", random_uniform_f32({4, 40}, 8)}}));
  return outputs.at("y");
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.byte_size() == b.byte_size() &&
         std::memcmp(a.data(), b.data(), a.byte_size()) == 0;
}

class VulkanBackendOptions : public ::testing::Test {
 protected:
  void SetUp() override { testing::use_lavapipe_with_validation(); }
  // The variables these tests set, unset for each test.
  ScopedEnv device_{"SEQRT_VULKAN_DEVICE", std::nullopt};
  ScopedEnv fp16_{"SEQRT_VULKAN_FP16_WEIGHTS", std::nullopt};
  ScopedEnv forms_{"SEQRT_VULKAN_FORMS", std::nullopt};
};

TEST_F(VulkanBackendOptions, Fp16WeightsByOptionMatchTheVariable) {
  Result<Tensor> fp32 = run_y({});
  SEQRT_SKIP_IF_NO_DEVICE("vulkan", fp32.status());
  BackendOptions fp16;
  ASSERT_TRUE(set_backend_option(fp16, "fp16_weights", "true").is_ok());
  Result<Tensor> by_option = run_y(fp16);
  ASSERT_TRUE(by_option.is_ok()) << by_option.status().to_string();
  Result<Tensor> by_variable = internal_error("not run");
  {
    ScopedEnv on("SEQRT_VULKAN_FP16_WEIGHTS", "1");
    by_variable = run_y({});
  }
  ASSERT_TRUE(by_variable.is_ok()) << by_variable.status().to_string();
  EXPECT_TRUE(same_bytes(*by_option, *by_variable));
  // Not a check that passes with the option ignored: rounded weights
  // change the products.
  EXPECT_FALSE(same_bytes(*by_option, *fp32));
}

TEST_F(VulkanBackendOptions, TheVariableOverridesTheOption) {
  Result<Tensor> fp32 = run_y({});
  SEQRT_SKIP_IF_NO_DEVICE("vulkan", fp32.status());
  ScopedEnv off("SEQRT_VULKAN_FP16_WEIGHTS", "0");
  BackendOptions fp16;
  fp16.fp16_weights = true;
  Result<Tensor> overridden = run_y(fp16);
  ASSERT_TRUE(overridden.is_ok()) << overridden.status().to_string();
  EXPECT_TRUE(same_bytes(*overridden, *fp32));
}

TEST_F(VulkanBackendOptions, AnIndexWithoutADeviceNamesTheDevices) {
  BackendOptions options;
  ASSERT_TRUE(set_backend_option(options, "device", "99").is_ok());
  Result<std::unique_ptr<Backend>> backend = create_backend("vulkan", options);
  if (backend.status().code() == StatusCode::kNoDevice) {
    SEQRT_SKIP_IF_NO_DEVICE("vulkan", backend.status());
  }
  EXPECT_EQ(backend.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(has(backend.status(),
                  "no Vulkan 1.2 compute device matches "
                  "'99' (backend option device"))
      << backend.status().message();
  EXPECT_TRUE(has(backend.status(), "devices: 0: "));
  // SEQRT_VULKAN_DEVICE overrides the option.
  ScopedEnv first("SEQRT_VULKAN_DEVICE", "0");
  EXPECT_TRUE(create_backend("vulkan", options).is_ok());
}

TEST_F(VulkanBackendOptions, FormsReachTheDeviceUnlessTheVariableSaysElse) {
  BackendOptions options;
  ASSERT_TRUE(set_backend_option(options, "forms", "recurrent").is_ok());
  Result<std::unique_ptr<Backend>> backend = create_backend("vulkan", options);
  SEQRT_SKIP_IF_NO_DEVICE("vulkan", backend.status());
  EXPECT_EQ(device_of(**backend)->limits().forms, SequenceForms::kRecurrent);
  ScopedEnv chunked("SEQRT_VULKAN_FORMS", "chunked");
  backend = create_backend("vulkan", options);
  ASSERT_TRUE(backend.is_ok()) << backend.status().to_string();
  EXPECT_EQ(device_of(**backend)->limits().forms, SequenceForms::kChunked);
}

// Checked before a device is opened: the same error with no Vulkan.
TEST_F(VulkanBackendOptions, BadKeysAndValuesAreNamed) {
  BackendOptions options;
  options.other["forms"] = "sideways";
  Status status = create_backend("vulkan", options).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(has(status,
                  "option forms must be auto, recurrent or chunked, "
                  "got 'sideways'"))
      << status.message();
  options = BackendOptions{};
  options.other["threads"] = "4";
  status = create_backend("vulkan", options).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(has(status,
                  "vulkan backend: no option 'threads'; it takes: "
                  "device ("))
      << status.message();
  EXPECT_TRUE(has(status, "fp16_weights (a boolean"));
  options = BackendOptions{};
  options.device = 0;
  options.other["device_name"] = "llvmpipe";
  status = create_backend("vulkan", options).status();
  EXPECT_TRUE(has(status, "give option device or device_name, not both"))
      << status.message();
  options.other["validation"] = "sometimes";
  options.device.reset();
  status = create_backend("vulkan", options).status();
  EXPECT_TRUE(has(status, "backend option validation must be a boolean"))
      << status.message();
}

}  // namespace
}  // namespace seqrt::vulkan
