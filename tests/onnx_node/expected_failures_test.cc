#include "tests/onnx_node/expected_failures.h"

#include <gtest/gtest.h>

namespace seqrt::onnx_node {
namespace {

TEST(ExpectedFailuresTest, ParsesEntriesAndSkipsComments) {
  auto list = parse_expected_failures(
      "# header comment\n"
      "\n"
      "test_acos  # op Acos is not in DESIGN.md\n"
      "  test_cosh\t#  op Cosh is not in DESIGN.md  \n",
      "list.txt");
  ASSERT_TRUE(list.is_ok()) << list.status().to_string();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ(list->at("test_acos"), "op Acos is not in DESIGN.md");
  EXPECT_EQ(list->at("test_cosh"), "op Cosh is not in DESIGN.md");
}

TEST(ExpectedFailuresTest, EntryWithoutReasonIsAnErrorNamingTheLine) {
  auto list = parse_expected_failures("test_a  # why\ntest_b\n", "list.txt");
  ASSERT_FALSE(list.is_ok());
  EXPECT_NE(list.status().message().find("list.txt:2"), std::string::npos)
      << list.status().message();
}

TEST(ExpectedFailuresTest, DuplicateEntryIsAnError) {
  auto list =
      parse_expected_failures("test_a  # one\ntest_a  # two\n", "list.txt");
  EXPECT_FALSE(list.is_ok());
}

TEST(ExpectedFailuresTest, TwoNamesOnALineIsAnError) {
  auto list = parse_expected_failures("test_a test_b  # why\n", "list.txt");
  EXPECT_FALSE(list.is_ok());
}

TEST(ExpectedFailuresTest, FormatRoundTrips) {
  const std::string line = format_expected_failure("test_x", "a reason");
  auto list = parse_expected_failures(line + "\n", "list.txt");
  ASSERT_TRUE(list.is_ok());
  EXPECT_EQ(list->at("test_x"), "a reason");
}

TEST(ExpectedFailuresTest, MissingFileIsAnEmptyList) {
  auto list = read_expected_failures("/nonexistent/expected_failures_x.txt");
  ASSERT_TRUE(list.is_ok());
  EXPECT_TRUE(list->empty());
}

}  // namespace
}  // namespace seqrt::onnx_node
