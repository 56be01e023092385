// Backend options through the registry and a Session: each backend refuses a
// key it does not take by name, a host backend has only device 0, and a key
// no backend takes is refused when it is set (runtime/backend_registry.h).
#include <gtest/gtest.h>

#include "graph/builder.h"
#include "runtime/backend_registry.h"
#include "runtime/session.h"

namespace seqrt {
namespace {

bool has(const Status& status, const std::string& text) {
  return status.message().find(text) != std::string::npos;
}

Graph add_graph() {
  GraphBuilder b("adder");
  ValueId x = b.input("x", DType::kF32, Shape{3});
  b.output(b.add("Add", {x, x}), "y");
  return std::move(b).build().value();
}

TEST(BackendOptions, HostBackendsTakeDeviceZeroOnly) {
  for (const std::string& name : compiled_backends()) {
    if (name != "reference" && name != "cpu") continue;
    SCOPED_TRACE(name);
    BackendOptions options;
    ASSERT_TRUE(set_backend_option(options, "device", "0").is_ok());
    EXPECT_TRUE(create_backend(name, options).is_ok());
    options.device = 3;
    Status status = create_backend(name, options).status();
    EXPECT_EQ(status.code(), StatusCode::kUnsupported);
    EXPECT_TRUE(has(status, "device index 3")) << status.message();
    options = BackendOptions{};
    options.fp16_weights = true;
    status = create_backend(name, options).status();
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(has(status, name + " backend: no option 'fp16_weights'; it "
                                   "takes: device"))
        << status.message();
  }
}

TEST(BackendOptions, AKeyNoBackendTakesIsRefusedWhenSet) {
  BackendOptions options;
  Status status = set_backend_option(options, "colour", "blue");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(has(status, "no backend of this build takes option 'colour'"))
      << status.message();
  EXPECT_TRUE(has(status, "device"));  // the keys there are
  EXPECT_TRUE(options.keys().empty());
  status = set_backend_option(options, "device", "-2");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(has(status, "'-2'")) << status.message();
}

TEST(BackendOptions, BackendDotKeyGoesToThatBackendOfAList) {
  // reference,cpu: "cpu.device=3" reaches the cpu backend (which has only
  // device 0) and not the first; "device" without a backend goes to the
  // first.
  BackendOptions options;
  ASSERT_TRUE(set_backend_option(options, "cpu.device", "3").is_ok());
  Status status = create_backend("reference,cpu", options).status();
  EXPECT_EQ(status.code(), StatusCode::kUnsupported);
  EXPECT_TRUE(has(status, "device index 3")) << status.message();
  EXPECT_TRUE(has(status, "cpu")) << status.message();
  options = BackendOptions{};
  ASSERT_TRUE(set_backend_option(options, "reference.device", "0").is_ok());
  ASSERT_TRUE(set_backend_option(options, "cpu.device", "0").is_ok());
  EXPECT_TRUE(create_backend("reference,cpu", options).is_ok());
  // Alone, a backend takes its own BACKEND.KEY too.
  BackendOptions alone;
  ASSERT_TRUE(set_backend_option(alone, "cpu.device", "3").is_ok());
  EXPECT_TRUE(has(create_backend("cpu", alone).status(), "device index 3"));
}

TEST(BackendOptions, BackendDotKeyErrorsNameWhatIsWrong) {
  BackendOptions options;
  Status status = set_backend_option(options, "nosuch.device", "0");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(has(status, "backend 'nosuch'")) << status.message();
  status = set_backend_option(options, "reference.forms", "chunked");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(has(status, "takes no option 'forms'")) << status.message();
  status = set_backend_option(options, "reference.device", "minus one");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(has(status, "device")) << status.message();
  // A backend not in the list asked for.
  ASSERT_TRUE(set_backend_option(options, "reference.device", "0").is_ok());
  status = create_backend("cpu", options).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(has(status, "is for backend 'reference', which is not among"))
      << status.message();
}

TEST(BackendOptions, EveryBackendDeclaresItsKeys) {
  for (const std::string& name : compiled_backends()) {
    std::vector<BackendOptionSpec> specs = backend_option_specs(name);
    ASSERT_FALSE(specs.empty()) << name;
    EXPECT_STREQ(specs.front().key, "device") << name;
  }
  EXPECT_TRUE(backend_option_specs("tpu").empty());
}

// The CUDA plugin's keys are checked before the plugin is looked for, so
// the error is the same on a machine without a GPU or without the plugin.
TEST(BackendOptions, CudaRefusesAnUnknownKeyWithoutItsDevice) {
  BackendOptions options;
  options.other["forms"] = "chunked";
  Status status = create_backend("cuda", options).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(has(status, "cuda backend: no option 'forms'; it takes: device"))
      << status.message();
}

TEST(BackendOptions, SessionsCarryThemToTheBackend) {
  SessionOptions options;
  options.backend = "reference";
  options.backend_options.device = 1;
  Status status = Session::create(add_graph(), options).status();
  EXPECT_EQ(status.code(), StatusCode::kUnsupported);
  EXPECT_TRUE(has(status, "backend 'reference' has one device"))
      << status.message();
  options.backend_options.device = 0;
  EXPECT_TRUE(Session::create(add_graph(), options).is_ok());
}

}  // namespace
}  // namespace seqrt
