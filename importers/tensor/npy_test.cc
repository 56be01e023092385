#include "importers/tensor/npy.h"

#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace seqrt {
namespace {

// A .npy file with the given version, header text and data bytes; the
// header is used as is (no padding), so tests control every byte.
std::vector<uint8_t> make_npy(int major, const std::string& header,
                              const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out = {
      0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  size_t length_bytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < length_bytes; ++i) {
    out.push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  }
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& values) {
  const auto* p = reinterpret_cast<const uint8_t*>(values.data());
  return std::vector<uint8_t>(p, p + values.size() * sizeof(T));
}

Result<Tensor> read(const std::vector<uint8_t>& bytes) {
  return read_npy_buffer(bytes.data(), bytes.size(), "test.npy");
}

// The error message of reading `bytes`, which must fail.
std::string read_error(const std::vector<uint8_t>& bytes) {
  Result<Tensor> result = read(bytes);
  EXPECT_FALSE(result.is_ok());
  return result.is_ok() ? "" : result.status().message();
}

// "(1, 1, ..., 1, )" with `rank` ones.
std::string ones_shape(int rank) {
  std::string shape = "(";
  for (int i = 0; i < rank; ++i) shape += "1, ";
  return shape + ")";
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "seqrt_npy_" + name;
}

TEST(npy, RoundTripsEveryDType) {
  std::vector<Tensor> tensors = {
      Tensor::from_vector<float>({2, 3}, {1.5f, -2, 3, 4, 5, 6e-8f}),
      Tensor::from_vector<Half>({2}, {Half{0x3c00}, Half{0xc000}}),
      Tensor::from_vector<double>({1, 2, 1}, {1e300, -0.25}),
      Tensor::from_vector<int8_t>({3}, {-128, 0, 127}),
      Tensor::from_vector<uint8_t>({3}, {0, 200, 255}),
      Tensor::from_vector<int32_t>({2, 2}, {-1, 2, -3, 1 << 30}),
      Tensor::from_vector<int64_t>({2}, {int64_t{1} << 40, -7}),
      Tensor::from_vector<bool>({4}, {true, false, false, true}),
  };
  for (const Tensor& tensor : tensors) {
    SCOPED_TRACE(dtype_name(tensor.dtype()));
    Result<std::vector<uint8_t>> bytes = write_npy_buffer(tensor);
    ASSERT_TRUE(bytes.is_ok()) << bytes.status().message();
    Result<Tensor> back = read(*bytes);
    ASSERT_TRUE(back.is_ok()) << back.status().message();
    EXPECT_TRUE(back->same_as(tensor));
  }
}

TEST(npy, RoundTripsScalarsAndEmptyArrays) {
  Tensor scalar = Tensor::scalar<float>(42.0f);
  Result<Tensor> empty = Tensor::allocate(DType::kI64, {0, 3});
  ASSERT_TRUE(empty.is_ok());
  for (const Tensor& tensor : {scalar, *empty}) {
    Result<std::vector<uint8_t>> bytes = write_npy_buffer(tensor);
    ASSERT_TRUE(bytes.is_ok());
    Result<Tensor> back = read(*bytes);
    ASSERT_TRUE(back.is_ok()) << back.status().message();
    EXPECT_TRUE(back->same_as(tensor));
  }
}

TEST(npy, WritesTheLayoutNumPyWrites) {
  Tensor tensor = Tensor::from_vector<float>({2, 3}, {0, 1, 2, 3, 4, 5});
  Result<std::vector<uint8_t>> bytes = write_npy_buffer(tensor);
  ASSERT_TRUE(bytes.is_ok());
  // Magic, version 1.0, then a little-endian u16 header length.
  ASSERT_GE(bytes->size(), 10u);
  EXPECT_EQ(std::string(bytes->begin(), bytes->begin() + 6), "\x93NUMPY");
  EXPECT_EQ((*bytes)[6], 1);
  EXPECT_EQ((*bytes)[7], 0);
  size_t header_bytes = (*bytes)[8] | ((*bytes)[9] << 8);
  EXPECT_EQ((10 + header_bytes) % 64, 0u);
  std::string header(bytes->begin() + 10, bytes->begin() + 10 + header_bytes);
  std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  EXPECT_EQ(header.substr(0, dict.size()), dict);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(bytes->size(), 10 + header_bytes + 24);
}

TEST(npy, WritesOneDimShapesWithATrailingComma) {
  Result<std::vector<uint8_t>> bytes =
      write_npy_buffer(Tensor::from_vector<int64_t>({3}, {1, 2, 3}));
  ASSERT_TRUE(bytes.is_ok());
  std::string text(bytes->begin(), bytes->end());
  EXPECT_NE(text.find("'descr': '<i8'"), std::string::npos);
  EXPECT_NE(text.find("'shape': (3,)"), std::string::npos);
}

TEST(npy, WritesBFloat16AsFloat32) {
  Tensor tensor = Tensor::from_vector<BFloat16>(
      {2}, {BFloat16{f32_to_bf16(1.5f)}, BFloat16{f32_to_bf16(-3.0f)}});
  Result<std::vector<uint8_t>> bytes = write_npy_buffer(tensor);
  ASSERT_TRUE(bytes.is_ok());
  Result<Tensor> back = read(*bytes);
  ASSERT_TRUE(back.is_ok());
  EXPECT_TRUE(back->same_as(Tensor::from_vector<float>({2}, {1.5f, -3.0f})));
}

TEST(npy, WritesInt4UnpackedAndFloat8AsFloat32) {
  Tensor i4 = Tensor::allocate(DType::kI4, {3}).value();
  for (int64_t i = 0; i < 3; ++i) i4.set_element_i64(i, 3 * i - 4);
  Result<std::vector<uint8_t>> bytes = write_npy_buffer(i4);
  ASSERT_TRUE(bytes.is_ok());
  Result<Tensor> back = read(*bytes);
  ASSERT_TRUE(back.is_ok());
  EXPECT_TRUE(back->same_as(Tensor::from_vector<int8_t>({3}, {-4, -1, 2})));
  Result<Tensor> packed = from_npy_compatible(*back, DType::kI4, "x");
  ASSERT_TRUE(packed.is_ok());
  EXPECT_TRUE(packed->same_as(i4));

  Tensor f8 = Tensor::allocate(DType::kF8E4M3FN, {2}).value();
  f8.set_element_f64(0, -0.375);
  f8.set_element_f64(1, 448.0);
  bytes = write_npy_buffer(f8);
  ASSERT_TRUE(bytes.is_ok());
  back = read(*bytes);
  ASSERT_TRUE(back.is_ok());
  EXPECT_TRUE(back->same_as(Tensor::from_vector<float>({2}, {-0.375f, 448})));
  Result<Tensor> again = from_npy_compatible(*back, DType::kF8E4M3FN, "x");
  ASSERT_TRUE(again.is_ok());
  EXPECT_TRUE(again->same_as(f8));
}

TEST(npy, WritesFloat4E2M1AndFloat8E8M0AsFloat32) {
  Tensor f4 = Tensor::allocate(DType::kF4E2M1, {3}).value();
  const float values[3] = {-1.5f, 6.0f, 0.5f};
  for (int64_t i = 0; i < 3; ++i) f4.set_element_f64(i, values[i]);
  Tensor e8m0 = Tensor::allocate(DType::kF8E8M0, {2}).value();
  e8m0.set_element_f64(0, 0.25);
  e8m0.set_element_f64(1, 1024.0);
  const std::vector<std::pair<Tensor, Tensor>> cases = {
      {f4, Tensor::from_vector<float>({3}, {-1.5f, 6.0f, 0.5f})},
      {e8m0, Tensor::from_vector<float>({2}, {0.25f, 1024.0f})}};
  for (const auto& [stored, wide] : cases) {
    SCOPED_TRACE(dtype_name(stored.dtype()));
    Result<std::vector<uint8_t>> bytes = write_npy_buffer(stored);
    ASSERT_TRUE(bytes.is_ok());
    Result<Tensor> back = read(*bytes);
    ASSERT_TRUE(back.is_ok());
    EXPECT_TRUE(back->same_as(wide));
    Result<Tensor> again = from_npy_compatible(*back, stored.dtype(), "x");
    ASSERT_TRUE(again.is_ok());
    EXPECT_TRUE(again->same_as(stored));
  }
  // A feed between codes converts as Cast does by default.
  Result<Tensor> rounded = from_npy_compatible(
      Tensor::from_vector<float>({2}, {5.5f, 3.0f}), DType::kF8E8M0, "x");
  ASSERT_TRUE(rounded.is_ok());
  EXPECT_EQ(rounded->element_f64(0), 8.0);  // up
  EXPECT_EQ(rounded->element_f64(1), 4.0);
}

TEST(npy, RefusesOutOfRangeOrMistypedInt4Carriers) {
  Result<Tensor> wide = from_npy_compatible(
      Tensor::from_vector<uint8_t>({2}, {3, 16}), DType::kU4, "input 'w'");
  ASSERT_FALSE(wide.is_ok());
  EXPECT_NE(wide.status().message().find("element 1 is 16, outside the u4 "
                                         "range 0 to 15"),
            std::string::npos)
      << wide.status().message();
  Result<Tensor> mistyped = from_npy_compatible(
      Tensor::from_vector<float>({1}, {1.0f}), DType::kI4, "input 'w'");
  ASSERT_FALSE(mistyped.is_ok());
  EXPECT_NE(mistyped.status().message().find("i4 tensor is given as i8"),
            std::string::npos);
}

TEST(npy, ReadsVersions2And3) {
  std::string header =
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }\n";
  for (int major : {2, 3}) {
    Result<Tensor> tensor =
        read(make_npy(major, header, bytes_of<int32_t>({7, -8})));
    ASSERT_TRUE(tensor.is_ok()) << tensor.status().message();
    EXPECT_TRUE(tensor->same_as(Tensor::from_vector<int32_t>({2}, {7, -8})));
  }
}

TEST(npy, AcceptsHeaderVariantsNumPyAccepts) {
  // Double quotes, another key order, no trailing comma, Python 2 longs,
  // '<' on one-byte types and '=' (native, little-endian here).
  std::vector<std::pair<std::string, DType>> headers = {
      {"{\"shape\": (2,), \"descr\": \"<u1\", \"fortran_order\": False}",
       DType::kU8},
      {"{'descr':'|u1','fortran_order':False,'shape':(2L,)}", DType::kU8},
      {"{'descr': '=i1', 'fortran_order': False, 'shape': (2,)}\n", DType::kI8},
  };
  for (const auto& [header, dtype] : headers) {
    SCOPED_TRACE(header);
    Result<Tensor> tensor = read(make_npy(1, header, {1, 2}));
    ASSERT_TRUE(tensor.is_ok()) << tensor.status().message();
    EXPECT_EQ(tensor->dtype(), dtype);
    EXPECT_EQ(tensor->element_i64(1), 2);
  }
}

TEST(npy, ConvertsBigEndianData) {
  std::vector<uint8_t> data = {0x00, 0x00, 0x01, 0x02, 0xff, 0xff, 0xff, 0xfe};
  Result<Tensor> tensor = read(make_npy(
      1, "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", data));
  ASSERT_TRUE(tensor.is_ok()) << tensor.status().message();
  EXPECT_TRUE(tensor->same_as(Tensor::from_vector<int32_t>({2}, {0x102, -2})));

  std::vector<uint8_t> one = {0x3f, 0x80, 0x00, 0x00};  // 1.0f big-endian
  Result<Tensor> f = read(make_npy(
      1, "{'descr': '>f4', 'fortran_order': False, 'shape': (), }", one));
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  EXPECT_EQ(f->element_f64(0), 1.0);
}

TEST(npy, TransposesFortranOrder) {
  // Column-major (2,3): columns (0,3), (1,4), (2,5).
  Result<Tensor> tensor = read(
      make_npy(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }",
               bytes_of<double>({0, 3, 1, 4, 2, 5})));
  ASSERT_TRUE(tensor.is_ok()) << tensor.status().message();
  EXPECT_TRUE(
      tensor->same_as(Tensor::from_vector<double>({2, 3}, {0, 1, 2, 3, 4, 5})));

  // Rank 3: element (i,j,k) sits at i + 2j + 4k in Fortran order.
  std::vector<int32_t> fortran(8);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 2; ++k)
        fortran[i + 2 * j + 4 * k] = 100 * i + 10 * j + k;
  Result<Tensor> cube = read(make_npy(
      1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 2, 2), }",
      bytes_of(fortran)));
  ASSERT_TRUE(cube.is_ok()) << cube.status().message();
  EXPECT_TRUE(cube->same_as(Tensor::from_vector<int32_t>(
      {2, 2, 2}, {0, 1, 10, 11, 100, 101, 110, 111})));
}

TEST(npy, StoresBoolsAsZeroOrOne) {
  Result<Tensor> tensor = read(
      make_npy(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
               {0, 7, 1}));
  ASSERT_TRUE(tensor.is_ok());
  EXPECT_TRUE(
      tensor->same_as(Tensor::from_vector<bool>({3}, {false, true, true})));
}

TEST(npy, RejectsBadHeadersWithClearErrors) {
  const std::string ok_tail = "'fortran_order': False, 'shape': (2,), }";
  std::vector<std::pair<std::string, std::string>> cases = {
      {"{'descr': '<c8', " + ok_tail, "dtype '<c8' is not supported"},
      {"{'descr': '<U3', " + ok_tail, "dtype '<U3' is not supported"},
      {"{'descr': '|f4', " + ok_tail, "dtype '|f4' is not supported"},
      {"{'descr': [('a', '<f4')], " + ok_tail, "structured"},
      {"{'descr': '<f4', 'shape': (2,), }", "must have the keys"},
      {"{'descr': '<f4', 'descr': '<f4', " + ok_tail, "appears twice"},
      {"{'descr': '<f4', 'extra': 1, " + ok_tail, "unknown key 'extra'"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", "True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}",
       "non-negative integer"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2)}",
       "trailing comma"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}",
       "expected ',' or ')'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x",
       "unexpected text"},
      {"{'descr' '<f4', 'fortran_order': False, 'shape': (2,)}",
       "expected ':'"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}",
       "dtype '<f4, ' is not supported"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)",
       "expected ',' or '}'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': "
       "(1000000000000000000000,)}",
       "too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': "
       "(100000000000000, 100000000000000)}",
       "too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': " + ones_shape(40) +
           "}",
       "more than 32 dims"},
      {"['descr', '<f4']", "expected '{'"},
      {"", "expected '{'"},
  };
  for (const auto& [header, expected] : cases) {
    SCOPED_TRACE(header);
    std::string message =
        read_error(make_npy(1, header, {0, 0, 0, 0, 0, 0, 0, 0}));
    EXPECT_NE(message.find("'test.npy'"), std::string::npos) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
}

TEST(npy, RejectsBadPreambles) {
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (), }";
  std::vector<uint8_t> data = bytes_of<float>({1.0f});
  std::vector<uint8_t> no_magic = make_npy(1, header, data);
  no_magic[1] = 'X';
  EXPECT_NE(read_error(no_magic).find("not a .npy file"), std::string::npos);
  std::vector<uint8_t> version = make_npy(1, header, data);
  version[6] = 4;
  EXPECT_NE(read_error(version).find("version 4.0"), std::string::npos);
  std::vector<uint8_t> huge = make_npy(2, header, data);
  huge[11] = 0x7f;  // header length near 2 GiB
  EXPECT_NE(read_error(huge).find("exceeds the limit"), std::string::npos);
  EXPECT_NE(read_error({}).find("not a .npy file"), std::string::npos);
}

TEST(npy, RequiresTheDataSizeToMatch) {
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  std::string message =
      read_error(make_npy(1, header, bytes_of<float>({1, 2, 3})));
  EXPECT_NE(message.find("must be 8 bytes, the file has 12"), std::string::npos)
      << message;
  message = read_error(make_npy(1, header, bytes_of<float>({1})));
  EXPECT_NE(message.find("must be 8 bytes, the file has 4"), std::string::npos)
      << message;
}

TEST(npy, EveryTruncationIsAnError) {
  Result<std::vector<uint8_t>> bytes =
      write_npy_buffer(Tensor::from_vector<int32_t>({2, 2}, {1, 2, 3, 4}));
  ASSERT_TRUE(bytes.is_ok());
  for (size_t size = 0; size < bytes->size(); ++size) {
    Result<Tensor> result = read_npy_buffer(bytes->data(), size, "cut.npy");
    ASSERT_FALSE(result.is_ok()) << "size " << size;
    EXPECT_NE(result.status().message().find("'cut.npy'"), std::string::npos);
  }
}

TEST(npy, RandomCorruptionNeverCrashes) {
  Result<std::vector<uint8_t>> valid = write_npy_buffer(
      Tensor::from_vector<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6}));
  ASSERT_TRUE(valid.is_ok());
  std::mt19937 rng(7);
  int failures = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint8_t> bytes = *valid;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) {
      // Corrupt the preamble and header, where parsing happens.
      bytes[rng() % 80] = static_cast<uint8_t>(rng());
    }
    Result<Tensor> result = read(bytes);
    if (!result.is_ok()) {
      ++failures;
      EXPECT_FALSE(result.status().message().empty());
    }
  }
  EXPECT_GT(failures, 0);
}

TEST(npy, FileErrorsNameThePath) {
  Result<Tensor> missing = read_npy_file(temp_path("does_not_exist.npy"));
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("does_not_exist.npy"),
            std::string::npos);

  Status write = write_npy_file(Tensor::scalar<float>(1.0f),
                                temp_path("no_such_dir/x.npy"));
  EXPECT_EQ(write.code(), StatusCode::kIoError);
  EXPECT_NE(write.message().find("no_such_dir/x.npy"), std::string::npos);

  EXPECT_FALSE(write_npy_buffer(Tensor()).is_ok());
}

TEST(npy, FileRoundTrip) {
  Tensor tensor = Tensor::from_vector<float>({3, 1}, {1, 2, 3});
  std::string path = temp_path("round_trip.npy");
  ASSERT_TRUE(write_npy_file(tensor, path).is_ok());
  Result<Tensor> back = read_npy_file(path);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_TRUE(back->same_as(tensor));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace seqrt
