#include "importers/onnx/op_table.h"

#include <gtest/gtest.h>

namespace seqrt {
namespace {

TEST(onnx_op_table, PicksTheLatestVersionAtOrBeforeTheOpset) {
  EXPECT_EQ(find_onnx_op("", "Gelu", 19), nullptr);
  ASSERT_NE(find_onnx_op("", "Gelu", 20), nullptr);
  EXPECT_EQ(find_onnx_op("", "Gelu", 27)->since_opset, 20);

  const OnnxOpVersion* old_mean = find_onnx_op("", "ReduceMean", 17);
  ASSERT_NE(old_mean, nullptr);
  EXPECT_EQ(old_mean->since_opset, 13);
  EXPECT_NE(old_mean->upgrade, nullptr);
  const OnnxOpVersion* new_mean = find_onnx_op("", "ReduceMean", 18);
  ASSERT_NE(new_mean, nullptr);
  EXPECT_EQ(new_mean->upgrade, nullptr);

  EXPECT_EQ(find_onnx_op("", "ReduceSum", 13)->upgrade, nullptr);
  EXPECT_NE(find_onnx_op("", "Split", 17)->upgrade, nullptr);
  EXPECT_EQ(find_onnx_op("", "Split", 18)->upgrade, nullptr);
  EXPECT_EQ(find_onnx_op("", "Resize", 17), nullptr);
  // RNN, GRU, LSTM: version 14's layout defaults to version 7's behaviour.
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    ASSERT_NE(find_onnx_op("", op, 13), nullptr) << op;
    EXPECT_EQ(find_onnx_op("", op, 27)->upgrade, nullptr) << op;
  }
  EXPECT_EQ(find_onnx_op("com.microsoft", "Add", 17), nullptr);
}

TEST(onnx_op_table, AiOnnxIsTheDefaultDomain) {
  EXPECT_EQ(normalize_domain("ai.onnx"), "");
  EXPECT_EQ(normalize_domain(""), "");
  EXPECT_EQ(normalize_domain("seqrt"), "seqrt");
}

}  // namespace
}  // namespace seqrt
