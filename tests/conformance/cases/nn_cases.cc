// Conformance cases of ops/nn: Softmax, LogSoftmax, LayerNormalization,
// RMSNormalization and RotaryEmbedding, over axes, dtypes and layouts.
#include <string>

#include "tests/conformance/op_case.h"

namespace seqrt {
namespace {

void add_softmax_cases(std::vector<OpCase>& cases) {
  uint64_t seed = 1000;
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    cases.push_back(
        make_case(op, "f32_2x5_default_axis",
                  {random_tensor(DType::kF32, {2, 5}, ++seed, -3, 3)}));
    cases.push_back(make_case(
        op, "f32_3x4x5_axis1",
        {random_tensor(DType::kF32, {3, 4, 5}, ++seed, -3, 3)}, {{"axis", 1}}));
    cases.push_back(
        make_case(op, "f32_3x4x5_axis_minus3",
                  {random_tensor(DType::kF32, {3, 4, 5}, ++seed, -3, 3)},
                  {{"axis", -3}}));
    cases.push_back(
        make_case(op, "f32_large_values",
                  {random_tensor(DType::kF32, {4, 7}, ++seed, -80, 80)}));
    cases.push_back(
        loosened(make_case(op, "f16_3x9",
                           {random_tensor(DType::kF16, {3, 9}, ++seed, -4, 4)}),
                 2e-3));
    cases.push_back(loosened(
        make_case(op, "bf16_2x3",
                  {random_tensor(DType::kBF16, {2, 3}, ++seed, -4, 4)}),
        2e-2));
    // Sizes the CPU backend runs on oneDNN (16384 elements and up).
    cases.push_back(
        make_case(op, "f32_onednn_size_1x4x64x64",
                  {random_tensor(DType::kF32, {1, 4, 64, 64}, ++seed, -8, 8)}));
    cases.push_back(
        make_case(op, "f32_onednn_size_axis1",
                  {random_tensor(DType::kF32, {2, 64, 160}, ++seed, -8, 8)},
                  {{"axis", 1}}));
    cases.push_back(
        make_case(op, "f64_1x1x6",
                  {random_tensor(DType::kF64, {1, 1, 6}, ++seed, -5, 5)}));
    cases.push_back(expect_failure(make_case(
        op, "rejects_axis_out_of_range",
        {random_tensor(DType::kF32, {2, 3}, ++seed)}, {{"axis", 2}})));
    cases.push_back(expect_failure(
        make_case(op, "rejects_i32",
                  {random_tensor(DType::kI32, {2, 3}, ++seed, -5, 5)})));
  }
}

void add_layer_norm_cases(std::vector<OpCase>& cases) {
  const char* op = "LayerNormalization";
  cases.push_back(make_case(op, "f32_2x3x8_all_outputs",
                            {random_tensor(DType::kF32, {2, 3, 8}, 1100, -2, 2),
                             random_tensor(DType::kF32, {8}, 1101, 0.5, 1.5),
                             random_tensor(DType::kF32, {8}, 1102)},
                            {}, 3));
  cases.push_back(
      make_case(op, "f32_axis_minus2_no_bias",
                {random_tensor(DType::kF32, {2, 3, 5}, 1103, -2, 2),
                 random_tensor(DType::kF32, {3, 5}, 1104, 0.5, 1.5)},
                {{"axis", -2}}, 3));
  cases.push_back(make_case(op, "f32_axis0_epsilon",
                            {random_tensor(DType::kF32, {4, 3}, 1105, -2, 2),
                             random_tensor(DType::kF32, {1}, 1106, 0.5, 1.5),
                             random_tensor(DType::kF32, {3}, 1107)},
                            {{"axis", 0}, {"epsilon", 0.1f}}));
  cases.push_back(
      loosened(make_case(op, "f16_4x16",
                         {random_tensor(DType::kF16, {4, 16}, 1108, -2, 2),
                          random_tensor(DType::kF16, {16}, 1109, 0.5, 1.5),
                          random_tensor(DType::kF16, {16}, 1110)}),
               5e-3));
  cases.push_back(make_case(op, "f64_3x7_stash_double",
                            {random_tensor(DType::kF64, {3, 7}, 1111, -2, 2),
                             random_tensor(DType::kF64, {7}, 1112, 0.5, 1.5)},
                            {{"stash_type", 11}}, 3));
  // Sizes the CPU backend runs on oneDNN (16384 elements and up).
  cases.push_back(
      make_case(op, "f32_onednn_size_1x64x384",
                {random_tensor(DType::kF32, {1, 64, 384}, 1117, -2, 2),
                 random_tensor(DType::kF32, {384}, 1118, 0.5, 1.5),
                 random_tensor(DType::kF32, {384}, 1119)}));
  cases.push_back(
      make_case(op, "f32_onednn_size_no_bias_axis1",
                {random_tensor(DType::kF32, {2, 96, 128}, 1120, -2, 2),
                 random_tensor(DType::kF32, {96, 128}, 1121, 0.5, 1.5)},
                {{"axis", 1}}));
  cases.push_back(
      expect_failure(make_case(op, "rejects_mismatched_scale",
                               {random_tensor(DType::kF32, {2, 8}, 1113),
                                random_tensor(DType::kF32, {4}, 1114)})));
  cases.push_back(
      expect_failure(make_case(op, "rejects_mixed_dtypes",
                               {random_tensor(DType::kF32, {2, 8}, 1115),
                                random_tensor(DType::kF16, {8}, 1116)})));
}

void add_rms_norm_cases(std::vector<OpCase>& cases) {
  const char* op = "RMSNormalization";
  cases.push_back(make_case(op, "f32_2x3x8",
                            {random_tensor(DType::kF32, {2, 3, 8}, 1200, -2, 2),
                             random_tensor(DType::kF32, {8}, 1201, 0.5, 1.5)}));
  cases.push_back(
      make_case(op, "f32_axis1",
                {random_tensor(DType::kF32, {2, 3, 5}, 1202, -2, 2),
                 random_tensor(DType::kF32, {3, 5}, 1203, 0.5, 1.5)},
                {{"axis", 1}, {"epsilon", 1e-3f}}));
  cases.push_back(make_case(op, "f32_axis_minus2_scalar_scale",
                            {random_tensor(DType::kF32, {3, 2, 7}, 1204, -2, 2),
                             random_tensor(DType::kF32, {}, 1205, 0.5, 1.5)},
                            {{"axis", -2}}));
  cases.push_back(
      loosened(make_case(op, "f16_x_f32_scale",
                         {random_tensor(DType::kF16, {4, 16}, 1206, -2, 2),
                          random_tensor(DType::kF32, {16}, 1207, 0.5, 1.5)}),
               2e-3));
  cases.push_back(
      loosened(make_case(op, "bf16_3x9",
                         {random_tensor(DType::kBF16, {3, 9}, 1208, -2, 2),
                          random_tensor(DType::kBF16, {9}, 1209, 0.5, 1.5)}),
               2e-2));
  cases.push_back(make_case(op, "f64_5",
                            {random_tensor(DType::kF64, {5}, 1210, -2, 2),
                             random_tensor(DType::kF64, {5}, 1211, 0.5, 1.5)}));
  cases.push_back(
      expect_failure(make_case(op, "rejects_mismatched_scale",
                               {random_tensor(DType::kF32, {2, 8}, 1212),
                                random_tensor(DType::kF32, {3}, 1213)})));
}

void add_rotary_cases(std::vector<OpCase>& cases) {
  const char* op = "RotaryEmbedding";
  // (batch 2, heads 3, seq 5, head 8), caches (batch, seq, 4).
  cases.push_back(make_case(op, "f32_4d_no_positions",
                            {random_tensor(DType::kF32, {2, 3, 5, 8}, 1300),
                             random_tensor(DType::kF32, {2, 5, 4}, 1301),
                             random_tensor(DType::kF32, {2, 5, 4}, 1302)}));
  // (batch 2, seq 5, hidden 3*8) with positions into caches of 16 rows.
  cases.push_back(make_case(op, "f32_3d_positions",
                            {random_tensor(DType::kF32, {2, 5, 24}, 1303),
                             random_tensor(DType::kF32, {16, 4}, 1304),
                             random_tensor(DType::kF32, {16, 4}, 1305),
                             random_tensor(DType::kI64, {2, 5}, 1306, 0, 16)},
                            {{"num_heads", 3}}));
  cases.push_back(make_case(op, "f32_4d_interleaved_positions",
                            {random_tensor(DType::kF32, {1, 2, 3, 6}, 1307),
                             random_tensor(DType::kF32, {10, 3}, 1308),
                             random_tensor(DType::kF32, {10, 3}, 1309),
                             random_tensor(DType::kI64, {1, 3}, 1310, 0, 10)},
                            {{"interleaved", 1}}));
  cases.push_back(make_case(op, "f32_3d_partial_rotary",
                            {random_tensor(DType::kF32, {2, 3, 16}, 1311),
                             random_tensor(DType::kF32, {2, 3, 2}, 1312),
                             random_tensor(DType::kF32, {2, 3, 2}, 1313)},
                            {{"num_heads", 2}, {"rotary_embedding_dim", 4}}));
  cases.push_back(
      loosened(make_case(op, "f16_4d_interleaved_partial",
                         {random_tensor(DType::kF16, {1, 2, 4, 8}, 1314),
                          random_tensor(DType::kF16, {6, 2}, 1315),
                          random_tensor(DType::kF16, {6, 2}, 1316),
                          random_tensor(DType::kI64, {1, 4}, 1317, 0, 6)},
                         {{"interleaved", 1}, {"rotary_embedding_dim", 4}}),
               2e-3));
  cases.push_back(make_case(op, "f64_3d_one_head",
                            {random_tensor(DType::kF64, {1, 4, 6}, 1318),
                             random_tensor(DType::kF64, {1, 4, 3}, 1319),
                             random_tensor(DType::kF64, {1, 4, 3}, 1320)},
                            {{"num_heads", 1}}));
  cases.push_back(
      expect_failure(make_case(op, "rejects_cache_width",
                               {random_tensor(DType::kF32, {1, 2, 3, 8}, 1321),
                                random_tensor(DType::kF32, {1, 3, 3}, 1322),
                                random_tensor(DType::kF32, {1, 3, 3}, 1323)})));
  cases.push_back(
      expect_failure(make_case(op, "rejects_3d_without_num_heads",
                               {random_tensor(DType::kF32, {1, 3, 8}, 1324),
                                random_tensor(DType::kF32, {1, 3, 4}, 1325),
                                random_tensor(DType::kF32, {1, 3, 4}, 1326)})));
}

}  // namespace

void add_nn_cases(std::vector<OpCase>& cases) {
  add_softmax_cases(cases);
  add_layer_norm_cases(cases);
  add_rms_norm_cases(cases);
  add_rotary_cases(cases);
}

}  // namespace seqrt
