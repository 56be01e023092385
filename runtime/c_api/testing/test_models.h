// Helpers for the C API tests. The test model is built with the C++ builder
// in test_models.cc; this header includes only the public API, so tests of
// seqrt.hpp (whose classes share names with the internal C++ ones) can use
// it too.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "seqrt/seqrt.h"

namespace c_api_test {

inline constexpr int64_t kHeads = 2, kDim = 4;

// A .seqrt file of y = x + Retention(x Wq, x Wk, x Wv, past_state), with x
// f32 (1, H, seq, d), one state pair past_state -> present_state, and
// metadata producer = "c_api_test": 5 ops.
std::vector<uint8_t> retention_model_bytes();

// A .seqrt file of v_final = Loop "loop0" of trip count m (i64 scalar)
// over v0 (f32, 2 values), adding 1 each iteration.
std::vector<uint8_t> loop_model_bytes();
inline constexpr int64_t kLoopHugeTrips = int64_t{1} << 62;

// A serialized ONNX ModelProto (opset 17): y = Relu(x), x f32 (2, n).
std::string onnx_relu_model_bytes();

// The test model, loaded through the C API.
inline seqrt_model* load_retention_model() {
  std::vector<uint8_t> bytes = retention_model_bytes();
  seqrt_model* model = nullptr;
  EXPECT_EQ(seqrt_model_load_memory(bytes.data(), bytes.size(), &model),
            SEQRT_OK)
      << seqrt_last_error_message();
  return model;
}

// x values for positions [begin, end) of a fixed sequence, (1, H, n, d).
inline std::vector<float> x_values(int64_t begin, int64_t end) {
  int64_t n = end - begin;
  std::vector<float> values(kHeads * n * kDim);
  for (int64_t h = 0; h < kHeads; ++h)
    for (int64_t t = 0; t < n; ++t)
      for (int64_t j = 0; j < kDim; ++j)
        values[(h * n + t) * kDim + j] =
            std::cos(0.3f * static_cast<float>(begin + t) +
                     0.7f * static_cast<float>(h * kDim + j));
  return values;
}

// An owned x tensor for positions [begin, end).
inline seqrt_tensor* x_tensor(int64_t begin, int64_t end) {
  std::vector<float> values = x_values(begin, end);
  int64_t dims[4] = {1, kHeads, end - begin, kDim};
  seqrt_tensor* tensor = nullptr;
  EXPECT_EQ(seqrt_tensor_create(SEQRT_DTYPE_F32, dims, 4, values.data(),
                                values.size() * sizeof(float), &tensor),
            SEQRT_OK)
      << seqrt_last_error_message();
  return tensor;
}

inline std::vector<float> floats(const seqrt_tensor* tensor) {
  int64_t count = 0;
  const void* data = nullptr;
  EXPECT_EQ(seqrt_tensor_element_count(tensor, &count), SEQRT_OK);
  EXPECT_EQ(seqrt_tensor_data(tensor, &data), SEQRT_OK);
  const float* values = static_cast<const float*>(data);
  return std::vector<float>(values, values + count);
}

// Position t of a (1, H, n, d) output, as H * d values.
inline std::vector<float> position(const std::vector<float>& values, int64_t n,
                                   int64_t t) {
  std::vector<float> out;
  for (int64_t h = 0; h < kHeads; ++h)
    for (int64_t j = 0; j < kDim; ++j)
      out.push_back(values[(h * n + t) * kDim + j]);
  return out;
}

inline bool message_has(const std::string& part) {
  return std::string(seqrt_last_error_message()).find(part) !=
         std::string::npos;
}

}  // namespace c_api_test
