// Dtype checks shared by the standard ops (elementwise, nn, reduce): sets of
// dtypes mirroring ONNX type constraints, the ONNX TensorProto data-type codes
// that Cast.to and stash_type use, and integer ranges of our dtypes.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "graph/dtype.h"
#include "graph/status.h"
#include "ops/op_context.h"

namespace seqrt {

// A set of dtypes, one bit per DType value.
class DTypeSet {
 public:
  constexpr DTypeSet() = default;
  constexpr DTypeSet(std::initializer_list<DType> dtypes) {
    for (DType dtype : dtypes) bits_ |= bit(dtype);
  }

  constexpr bool contains(DType dtype) const {
    return (bits_ & bit(dtype)) != 0;
  }
  constexpr DTypeSet operator|(DTypeSet other) const {
    DTypeSet out;
    out.bits_ = bits_ | other.bits_;
    return out;
  }
  // "f32, f16, bf16 or f64", in DType order.
  std::string to_string() const;

 private:
  static constexpr uint32_t bit(DType dtype) {
    return uint32_t{1} << static_cast<uint32_t>(dtype);
  }

  uint32_t bits_ = 0;
};

inline constexpr DTypeSet kFloatTypes{DType::kF32, DType::kF16, DType::kBF16,
                                      DType::kF64};
inline constexpr DTypeSet kSignedIntTypes{DType::kI8, DType::kI32, DType::kI64};
inline constexpr DTypeSet kIntTypes = kSignedIntTypes | DTypeSet{DType::kU8};
inline constexpr DTypeSet kNumericTypes = kFloatTypes | kIntTypes;
inline constexpr DTypeSet kSignedNumericTypes = kFloatTypes | kSignedIntTypes;
inline constexpr DTypeSet kBoolTypes{DType::kBool};
inline constexpr DTypeSet kAllTypes = kNumericTypes | kBoolTypes;
inline constexpr DTypeSet kInt4Types{DType::kI4, DType::kU4};
// The float8s that quantize (E8M0, a scale format, is Cast's only).
inline constexpr DTypeSet kFloat8Types{DType::kF8E4M3FN, DType::kF8E4M3FNUZ,
                                       DType::kF8E5M2, DType::kF8E5M2FNUZ};
// The storage-only types QuantizeLinear writes and DequantizeLinear reads.
inline constexpr DTypeSet kQuantizedStorageTypes =
    kInt4Types | kFloat8Types | DTypeSet{DType::kF4E2M1};
// Only ops whose schema sets storage_only_types take these (graph/dtype.h).
inline constexpr DTypeSet kStorageOnlyTypes =
    kQuantizedStorageTypes | DTypeSet{DType::kF8E8M0};

// "[Relu] node 'r': input 'X' must be f32, ..., i32 or i64, got u8".
Status check_input_dtype(const OpContext& ctx, const std::string& what,
                         DType dtype, DTypeSet allowed);

// Two inputs that ONNX types with the same type variable.
Status check_same_dtype(const OpContext& ctx, const std::string& what_a,
                        DType a, const std::string& what_b, DType b);

// The dtype of an ONNX TensorProto data-type code (1 float, 2 uint8, 3 int8,
// 6 int32, 7 int64, 9 bool, 10 float16, 11 double, 16 bfloat16, 17-20 the
// float8s, 21 uint4, 22 int4, 23 float4e2m1, 24 float8e8m0); other codes
// are an error naming the attribute.
Result<DType> dtype_from_onnx_code(const OpContext& ctx,
                                   const std::string& attr_name, int64_t code);

// The range of an integer or bool dtype, as int64.
int64_t integer_lowest(DType dtype);
int64_t integer_highest(DType dtype);

}  // namespace seqrt
