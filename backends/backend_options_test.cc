#include "backends/backend_options.h"

#include <gtest/gtest.h>

namespace seqrt {
namespace {

bool has(const Status& status, const std::string& text) {
  return status.message().find(text) != std::string::npos;
}

TEST(BackendOptions, TypedKeysAreParsed) {
  BackendOptions options;
  ASSERT_TRUE(options.set("device", "2").is_ok());
  ASSERT_TRUE(options.set("fp16_weights", "TRUE").is_ok());
  ASSERT_TRUE(options.set("forms", "chunked").is_ok());
  EXPECT_EQ(options.device, 2);
  EXPECT_EQ(options.fp16_weights, true);
  EXPECT_EQ(options.other.at("forms"), "chunked");
  EXPECT_EQ(options.keys(),
            (std::vector<std::string>{"device", "forms", "fp16_weights"}));
  ASSERT_TRUE(options.set("fp16_weights", "off").is_ok());
  EXPECT_EQ(options.fp16_weights, false);
}

TEST(BackendOptions, BadValuesNameTheKeyAndWhatWasExpected) {
  BackendOptions options;
  for (const char* bad : {"-1", "one", "", "1.5", "99999999999"}) {
    Status status = options.set("device", bad);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_TRUE(has(status, "device") && has(status, "integer >= 0"))
        << status.message();
  }
  Status status = options.set("fp16_weights", "maybe");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(has(status, "fp16_weights") && has(status, "'maybe'"));
  EXPECT_EQ(options.set("Bad Key", "1").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(options.set("", "1").code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(options.keys().empty()) << "a refused value sets nothing";
}

TEST(BackendOptions, UnknownKeysAreRefusedListingTheAcceptedOnes) {
  BackendOptions options;
  ASSERT_TRUE(options.set("device", "0").is_ok());
  const std::vector<BackendOptionSpec> specs = {
      {"device", "an index"}, {"forms", "auto, recurrent or chunked"}};
  EXPECT_TRUE(check_backend_option_keys("test", options, specs).is_ok());
  ASSERT_TRUE(options.set("fp16_weights", "1").is_ok());
  Status status = check_backend_option_keys("test", options, specs);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(has(status, "test backend: no option 'fp16_weights'"))
      << status.message();
  EXPECT_TRUE(has(status,
                  "device (an index), forms (auto, recurrent or "
                  "chunked)"));
  EXPECT_TRUE(has(check_backend_option_keys("none", options, {}), "none"));
}

TEST(BackendOptions, SingleDeviceBackendsTakeOnlyIndexZero) {
  BackendOptions options;
  EXPECT_TRUE(check_single_device("cpu", options).is_ok());
  options.device = 0;
  EXPECT_TRUE(check_single_device("cpu", options).is_ok());
  options.device = 1;
  Status status = check_single_device("cpu", options);
  EXPECT_EQ(status.code(), StatusCode::kUnsupported);
  EXPECT_TRUE(has(status, "device index 1")) << status.message();
}

}  // namespace
}  // namespace seqrt
