#include "importers/onnx/tensor_convert.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include <gtest/gtest.h>

#include "importers/onnx/tensor_proto.h"

namespace seqrt {
namespace {

using onnx::TensorProto;

TensorProto typed(int32_t elem_type, std::vector<int64_t> dims) {
  TensorProto proto;
  proto.set_name("w");
  proto.set_data_type(elem_type);
  for (int64_t d : dims) proto.add_dims(d);
  return proto;
}

Tensor convert_ok(const TensorProto& proto, const std::string& dir = "") {
  Result<Tensor> tensor = tensor_from_proto(proto, dir, "initializer 'w'");
  EXPECT_TRUE(tensor.is_ok()) << tensor.status().message();
  return tensor.is_ok() ? *tensor : Tensor();
}

constexpr int32_t kOnnxInt4 = 22;
constexpr int32_t kOnnxUint4 = 21;
constexpr int32_t kOnnxFloat8E4M3FN = 17;
constexpr int32_t kOnnxFloat4E2M1 = 23;
constexpr int32_t kOnnxFloat8E8M0 = 24;

TEST(onnx_tensor, Int4FromRawDataAndBothInt32DataForms) {
  // -3, 7, -8 packed: low nibble first, the odd last byte's high nibble 0.
  TensorProto raw = typed(kOnnxInt4, {3});
  raw.set_raw_data(std::string("\x7d\x08", 2));
  Tensor from_raw = convert_ok(raw);
  ASSERT_EQ(from_raw.dtype(), DType::kI4);
  EXPECT_EQ(from_raw.element_i64(0), -3);
  EXPECT_EQ(from_raw.element_i64(1), 7);
  EXPECT_EQ(from_raw.element_i64(2), -8);

  TensorProto packed = typed(kOnnxInt4, {3});  // ONNX: a byte an entry
  packed.add_int32_data(0x7d);
  packed.add_int32_data(0x08);
  EXPECT_TRUE(convert_ok(packed).same_as(from_raw));

  TensorProto unpacked = typed(kOnnxInt4, {3});  // an element an entry
  for (int v : {-3, 7, -8}) unpacked.add_int32_data(v);
  EXPECT_TRUE(convert_ok(unpacked).same_as(from_raw));

  TensorProto wrong = typed(kOnnxUint4, {3});
  for (int v : {1, 2, 3, 4}) wrong.add_int32_data(v);
  Result<Tensor> refused = tensor_from_proto(wrong, "", "initializer 'w'");
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("int32_data holds 4 values"),
            std::string::npos)
      << refused.status().message();

  TensorProto short_raw = typed(kOnnxUint4, {3});
  short_raw.set_raw_data(std::string("\x01", 1));
  EXPECT_FALSE(tensor_from_proto(short_raw, "", "w").is_ok());
}

TEST(onnx_tensor, Int4AndFloat8WriteBackAsTheyWereRead) {
  TensorProto raw = typed(kOnnxUint4, {3});
  raw.set_raw_data(std::string("\x21\x03", 2));
  Tensor u4 = convert_ok(raw);
  EXPECT_EQ(u4.element_i64(2), 3);
  TensorProto written;
  tensor_to_proto(u4, "w", written);
  EXPECT_EQ(written.data_type(), kOnnxUint4);
  EXPECT_EQ(written.raw_data(), raw.raw_data());

  TensorProto f8 = typed(kOnnxFloat8E4M3FN, {2});
  f8.add_int32_data(0x7e);  // 448
  f8.add_int32_data(0xb8);  // -1
  Tensor t = convert_ok(f8);
  ASSERT_EQ(t.dtype(), DType::kF8E4M3FN);
  EXPECT_EQ(t.element_f64(0), 448.0);
  EXPECT_EQ(t.element_f64(1), -1.0);
  EXPECT_EQ(dtype_from_onnx(kOnnxFloat8E4M3FN), DType::kF8E4M3FN);
  EXPECT_EQ(onnx_from_dtype(DType::kI4), kOnnxInt4);
}

TEST(onnx_tensor, Float4E2M1PacksLikeInt4AndFloat8E8M0IsABytePattern) {
  // 0.5, -6, 3 packed low nibble first; the odd last byte's high nibble 0.
  TensorProto raw = typed(kOnnxFloat4E2M1, {3});
  raw.set_raw_data(std::string("\xf1\x05", 2));
  Tensor from_raw = convert_ok(raw);
  ASSERT_EQ(from_raw.dtype(), DType::kF4E2M1);
  EXPECT_EQ(from_raw.byte_size(), 2u);
  EXPECT_EQ(from_raw.element_f64(0), 0.5);
  EXPECT_EQ(from_raw.element_f64(1), -6.0);
  EXPECT_EQ(from_raw.element_f64(2), 3.0);

  TensorProto packed = typed(kOnnxFloat4E2M1, {3});  // a byte an entry
  packed.add_int32_data(0xf1);
  packed.add_int32_data(0x05);
  EXPECT_TRUE(convert_ok(packed).same_as(from_raw));
  TensorProto unpacked = typed(kOnnxFloat4E2M1, {3});  // an element an entry
  for (int v : {0x1, 0xf, 0x5}) unpacked.add_int32_data(v);
  EXPECT_TRUE(convert_ok(unpacked).same_as(from_raw));

  TensorProto written;
  tensor_to_proto(from_raw, "w", written);
  EXPECT_EQ(written.data_type(), kOnnxFloat4E2M1);
  EXPECT_EQ(written.raw_data(), raw.raw_data());

  TensorProto e8m0 = typed(kOnnxFloat8E8M0, {3});
  for (int v : {0x7f, 0x00, 0xff}) e8m0.add_int32_data(v);
  Tensor scales = convert_ok(e8m0);
  ASSERT_EQ(scales.dtype(), DType::kF8E8M0);
  EXPECT_EQ(scales.element_f64(0), 1.0);
  EXPECT_EQ(scales.element_f64(1), std::ldexp(1.0, -127));
  EXPECT_TRUE(std::isnan(scales.element_f64(2)));
  EXPECT_EQ(onnx_from_dtype(DType::kF8E8M0), kOnnxFloat8E8M0);
  EXPECT_EQ(onnx_type_name(kOnnxFloat8E8M0), "FLOAT8E8M0");
  EXPECT_EQ(onnx_type_name(kOnnxFloat4E2M1), "FLOAT4E2M1");
}

TEST(onnx_tensor, TypedFieldsOfEveryDtype) {
  TensorProto f32 = typed(TensorProto::FLOAT, {2});
  f32.add_float_data(1.5f);
  f32.add_float_data(-2.0f);
  EXPECT_TRUE(
      convert_ok(f32).same_as(Tensor::from_vector<float>({2}, {1.5f, -2.0f})));

  TensorProto f64 = typed(TensorProto::DOUBLE, {1});
  f64.add_double_data(0.25);
  EXPECT_TRUE(
      convert_ok(f64).same_as(Tensor::from_vector<double>({1}, {0.25})));

  TensorProto i64 = typed(TensorProto::INT64, {2});
  i64.add_int64_data(-7);
  i64.add_int64_data(int64_t{1} << 40);
  EXPECT_TRUE(convert_ok(i64).same_as(
      Tensor::from_vector<int64_t>({2}, {-7, int64_t{1} << 40})));

  TensorProto i32 = typed(TensorProto::INT32, {1});
  i32.add_int32_data(-3);
  EXPECT_TRUE(convert_ok(i32).same_as(Tensor::from_vector<int32_t>({1}, {-3})));

  TensorProto i8 = typed(TensorProto::INT8, {2});
  i8.add_int32_data(-128);
  i8.add_int32_data(127);
  EXPECT_TRUE(
      convert_ok(i8).same_as(Tensor::from_vector<int8_t>({2}, {-128, 127})));

  TensorProto u8 = typed(TensorProto::UINT8, {1});
  u8.add_int32_data(255);
  EXPECT_TRUE(convert_ok(u8).same_as(Tensor::from_vector<uint8_t>({1}, {255})));

  TensorProto b = typed(TensorProto::BOOL, {2});
  b.add_int32_data(1);
  b.add_int32_data(0);
  EXPECT_TRUE(
      convert_ok(b).same_as(Tensor::from_vector<bool>({2}, {true, false})));

  TensorProto f16 = typed(TensorProto::FLOAT16, {1});
  f16.add_int32_data(f32_to_f16(1.5f));
  EXPECT_EQ(convert_ok(f16).element_f64(0), 1.5);

  TensorProto bf16 = typed(TensorProto::BFLOAT16, {1});
  bf16.add_int32_data(f32_to_bf16(-3.0f));
  EXPECT_EQ(convert_ok(bf16).element_f64(0), -3.0);
}

TEST(onnx_tensor, RawDataAndScalars) {
  TensorProto raw = typed(TensorProto::INT32, {2, 2});
  std::vector<int32_t> values = {1, 2, 3, 4};
  raw.set_raw_data(values.data(), values.size() * sizeof(int32_t));
  EXPECT_TRUE(convert_ok(raw).same_as(
      Tensor::from_vector<int32_t>({2, 2}, {1, 2, 3, 4})));

  TensorProto scalar = typed(TensorProto::FLOAT, {});
  scalar.add_float_data(7.0f);
  Tensor tensor = convert_ok(scalar);
  EXPECT_EQ(tensor.rank(), 0u);
  EXPECT_EQ(tensor.element_f64(0), 7.0);

  TensorProto empty = typed(TensorProto::FLOAT, {0, 3});
  EXPECT_EQ(convert_ok(empty).num_elements(), 0);
}

TEST(onnx_tensor, WrongSizesAndTypesAreErrorsNamingTheTensor) {
  TensorProto short_raw = typed(TensorProto::FLOAT, {3});
  short_raw.set_raw_data(std::string(8, '\0'));
  Result<Tensor> a = tensor_from_proto(short_raw, "", "initializer 'w'");
  ASSERT_FALSE(a.is_ok());
  EXPECT_NE(a.status().message().find("'w'"), std::string::npos);
  EXPECT_NE(a.status().message().find("raw_data holds 8 bytes"),
            std::string::npos);

  TensorProto few = typed(TensorProto::FLOAT, {3});
  few.add_float_data(1.0f);
  EXPECT_FALSE(tensor_from_proto(few, "", "w").is_ok());

  TensorProto huge =
      typed(TensorProto::FLOAT, {int64_t{1} << 40, int64_t{1} << 40});
  Result<Tensor> c = tensor_from_proto(huge, "", "initializer 'w'");
  ASSERT_FALSE(c.is_ok());
  EXPECT_NE(c.status().message().find("bad dims"), std::string::npos);

  TensorProto negative = typed(TensorProto::FLOAT, {-1});
  EXPECT_FALSE(tensor_from_proto(negative, "", "w").is_ok());

  // 25 is UINT2, newer than the ONNX 1.12 schema we build against.
  std::vector<int32_t> odd_types = {TensorProto::STRING,
                                    TensorProto::COMPLEX64,
                                    TensorProto::UINT16,
                                    TensorProto::UINT64,
                                    25,
                                    TensorProto::INT16};
  for (int32_t type : odd_types) {
    TensorProto odd = typed(type, {1});
    Result<Tensor> r = tensor_from_proto(odd, "", "initializer 'w'");
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(r.status().message().find("initializer 'w'"), std::string::npos);
    EXPECT_NE(r.status().message().find(onnx_type_name(type)),
              std::string::npos);
  }
}

class ExternalDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/seqrt_onnx_external_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    std::vector<float> values = {0, 0, 1, 2, 3, 4};  // 8 bytes of padding
    std::ofstream(dir_ + "/weights.bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(values.data()), 24);
    // A sibling of the folder, unique to this test.
    outside_ = dir_ + "_outside.bin";
    std::ofstream(outside_, std::ios::binary)
        .write(reinterpret_cast<const char*>(values.data()), 24);
  }
  void TearDown() override {
    std::remove((dir_ + "/weights.bin").c_str());
    std::remove((dir_ + "/link.bin").c_str());
    std::remove((dir_ + "/fifo.bin").c_str());
    std::remove(outside_.c_str());
    rmdir(dir_.c_str());
  }

  TensorProto external(const std::string& location, int64_t offset,
                       int64_t length = -1) {
    TensorProto proto = typed(TensorProto::FLOAT, {2, 2});
    proto.set_data_location(TensorProto::EXTERNAL);
    auto* entry = proto.add_external_data();
    entry->set_key("location");
    entry->set_value(location);
    entry = proto.add_external_data();
    entry->set_key("offset");
    entry->set_value(std::to_string(offset));
    if (length >= 0) {
      entry = proto.add_external_data();
      entry->set_key("length");
      entry->set_value(std::to_string(length));
    }
    return proto;
  }

  std::string error_of(const TensorProto& proto) {
    Result<Tensor> tensor = tensor_from_proto(proto, dir_, "initializer 'w'");
    EXPECT_FALSE(tensor.is_ok());
    return tensor.is_ok() ? "" : tensor.status().message();
  }

  std::string dir_;
  std::string outside_;
};

TEST_F(ExternalDataTest, ReadsAtOffset) {
  Tensor tensor = convert_ok(external("weights.bin", 8, 16), dir_);
  EXPECT_TRUE(tensor.same_as(Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4})));
  EXPECT_TRUE(convert_ok(external("./weights.bin", 8), dir_).same_as(tensor));
}

TEST_F(ExternalDataTest, RefusesEscapesAndShortFiles) {
  std::string outside_name = outside_.substr(outside_.rfind('/') + 1);
  EXPECT_NE(error_of(external("../" + outside_name, 8)).find("contains '..'"),
            std::string::npos);
  EXPECT_NE(error_of(external(dir_ + "/weights.bin", 8)).find("is absolute"),
            std::string::npos);
  EXPECT_NE(error_of(external("weights.bin", 16)).find("too short"),
            std::string::npos);
  EXPECT_NE(error_of(external("weights.bin", 8, 12)).find("length is 12"),
            std::string::npos);
  EXPECT_NE(error_of(external("missing.bin", 0)).find("missing.bin"),
            std::string::npos);
  ASSERT_EQ(symlink(outside_.c_str(), (dir_ + "/link.bin").c_str()), 0);
  EXPECT_NE(
      error_of(external("link.bin", 8)).find("outside the model's folder"),
      std::string::npos);
  Result<Tensor> no_dir =
      tensor_from_proto(external("weights.bin", 8), "", "initializer 'w'");
  ASSERT_FALSE(no_dir.is_ok());
  EXPECT_NE(no_dir.status().message().find("needs the model's folder"),
            std::string::npos);
}

// A FIFO as external data is refused at once, not waited on for a writer.
TEST_F(ExternalDataTest, RefusesAFifoWithoutBlocking) {
  ASSERT_EQ(mkfifo((dir_ + "/fifo.bin").c_str(), 0600), 0);
  EXPECT_NE(error_of(external("fifo.bin", 0)).find("is not a regular file"),
            std::string::npos);
}

TEST(onnx_tensor_pb, FileRoundTripAndGarbage) {
  std::string path =
      "/tmp/seqrt_onnx_tensor_" + std::to_string(getpid()) + ".pb";
  Tensor tensor = Tensor::from_vector<int64_t>({3}, {5, -6, 7});
  ASSERT_TRUE(write_tensor_pb_file(tensor, "t", path).is_ok());
  Result<Tensor> back = read_tensor_pb_file(path);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_TRUE(back->same_as(tensor));
  std::remove(path.c_str());

  std::string garbage = "\xff\xff\xff\xff\xff";
  Result<Tensor> bad = read_tensor_pb_buffer(
      reinterpret_cast<const uint8_t*>(garbage.data()), garbage.size(), "g.pb");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("g.pb"), std::string::npos);

  Result<Tensor> missing = read_tensor_pb_file("/nonexistent/x.pb");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace seqrt
