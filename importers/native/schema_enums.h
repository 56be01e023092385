// The enums of schema/seqrt.fbs mirror seqrt::DType and seqrt::AttrType
// number for number (the numbers are the file format); these checks keep
// them in step, so conversion is a cast.
#pragma once

#include "graph/attribute.h"
#include "graph/dtype.h"
#include "schema/seqrt_generated.h"

namespace seqrt {

#define SEQRT_SAME_ENUM(ours, theirs) \
  static_assert(static_cast<int>(ours) == static_cast<int>(theirs), #ours)
SEQRT_SAME_ENUM(DType::kUndefined, fb::DType::Undefined);
SEQRT_SAME_ENUM(DType::kF32, fb::DType::F32);
SEQRT_SAME_ENUM(DType::kF16, fb::DType::F16);
SEQRT_SAME_ENUM(DType::kBF16, fb::DType::BF16);
SEQRT_SAME_ENUM(DType::kF64, fb::DType::F64);
SEQRT_SAME_ENUM(DType::kI8, fb::DType::I8);
SEQRT_SAME_ENUM(DType::kU8, fb::DType::U8);
SEQRT_SAME_ENUM(DType::kI32, fb::DType::I32);
SEQRT_SAME_ENUM(DType::kI64, fb::DType::I64);
SEQRT_SAME_ENUM(DType::kBool, fb::DType::Bool);
SEQRT_SAME_ENUM(DType::kI4, fb::DType::I4);
SEQRT_SAME_ENUM(DType::kU4, fb::DType::U4);
SEQRT_SAME_ENUM(DType::kF8E4M3FN, fb::DType::F8E4M3FN);
SEQRT_SAME_ENUM(DType::kF8E4M3FNUZ, fb::DType::F8E4M3FNUZ);
SEQRT_SAME_ENUM(DType::kF8E5M2, fb::DType::F8E5M2);
SEQRT_SAME_ENUM(DType::kF8E5M2FNUZ, fb::DType::F8E5M2FNUZ);
SEQRT_SAME_ENUM(DType::kF8E8M0, fb::DType::F8E8M0);
SEQRT_SAME_ENUM(DType::kF4E2M1, fb::DType::F4E2M1);
SEQRT_SAME_ENUM(kLastDType, fb::DType::MAX);
SEQRT_SAME_ENUM(AttrType::kInt, fb::AttrType::Int);
SEQRT_SAME_ENUM(AttrType::kFloat, fb::AttrType::Float);
SEQRT_SAME_ENUM(AttrType::kString, fb::AttrType::String);
SEQRT_SAME_ENUM(AttrType::kInts, fb::AttrType::Ints);
SEQRT_SAME_ENUM(AttrType::kFloats, fb::AttrType::Floats);
SEQRT_SAME_ENUM(AttrType::kStrings, fb::AttrType::Strings);
SEQRT_SAME_ENUM(AttrType::kTensor, fb::AttrType::Tensor);
SEQRT_SAME_ENUM(AttrType::kGraph, fb::AttrType::Graph);
#undef SEQRT_SAME_ENUM

inline fb::DType to_fb(DType dtype) { return static_cast<fb::DType>(dtype); }
inline fb::AttrType to_fb(AttrType type) {
  return static_cast<fb::AttrType>(type);
}

}  // namespace seqrt
