// Conformance cases of ops/elementwise: every op on odd sizes, with
// broadcasting, and in each dtype class it accepts; a few cases that must
// fail on every backend.
#include <limits>
#include <string>

#include "tests/conformance/op_case.h"

namespace seqrt {
namespace {

// Tolerances a real backend needs for 16-bit outputs.
OpCase& loosen_for(OpCase& c, DType dtype) {
  if (dtype == DType::kF16) {
    c.rtol = 2e-3;
    c.atol = 2e-3;
  } else if (dtype == DType::kBF16) {
    c.rtol = 2e-2;
    c.atol = 2e-2;
  }
  return c;
}

struct UnaryCaseSpec {
  const char* op;
  double lo, hi;     // input range inside the op's domain
  bool signed_ints;  // i8/i32/i64 inputs are allowed too
};

const UnaryCaseSpec kUnarySpecs[] = {
    {"Sqrt", 0.0, 4.0, false},      {"Exp", -3.0, 3.0, false},
    {"Log", 0.05, 4.0, false},      {"Neg", -3.0, 3.0, true},
    {"Abs", -3.0, 3.0, true},       {"Reciprocal", 0.25, 4.0, false},
    {"Erf", -2.0, 2.0, true},       {"Tanh", -3.0, 3.0, false},
    {"Sigmoid", -8.0, 8.0, false},  {"Relu", -3.0, 3.0, true},
    {"Softplus", -8.0, 8.0, false}, {"Sin", -4.0, 4.0, false},
    {"Cos", -4.0, 4.0, false},      {"Floor", -5.0, 5.0, false},
    {"Ceil", -5.0, 5.0, false},     {"Sign", -3.0, 3.0, true},
};

void add_unary_cases(std::vector<OpCase>& cases) {
  uint64_t seed = 100;
  for (const UnaryCaseSpec& spec : kUnarySpecs) {
    const struct {
      const char* name;
      DType dtype;
      std::vector<int64_t> dims;
    } shapes[] = {{"f32_3x5", DType::kF32, {3, 5}},
                  {"f16_7", DType::kF16, {7}},
                  {"bf16_2x3", DType::kBF16, {2, 3}},
                  {"f64_4x1x3", DType::kF64, {4, 1, 3}},
                  {"f32_scalar", DType::kF32, {}}};
    for (const auto& shape : shapes) {
      OpCase c = make_case(
          spec.op, shape.name,
          {random_tensor(shape.dtype, shape.dims, ++seed, spec.lo, spec.hi)});
      cases.push_back(loosen_for(c, shape.dtype));
    }
    if (spec.signed_ints) {
      cases.push_back(
          make_case(spec.op, "i32_5x3",
                    {random_tensor(DType::kI32, {5, 3}, ++seed, -100, 100)}));
      cases.push_back(
          make_case(spec.op, "i64_9",
                    {random_tensor(DType::kI64, {9}, ++seed, -50, 50)}));
      cases.push_back(
          make_case(spec.op, "i8_6",
                    {random_tensor(DType::kI8, {6}, ++seed, -100, 100)}));
    } else {
      cases.push_back(expect_failure(make_case(
          spec.op, "rejects_i32", {random_tensor(DType::kI32, {3}, ++seed)})));
    }
  }
  cases.push_back(
      make_case("Abs", "u8_4", {random_tensor(DType::kU8, {4}, 7, 0, 255)}));
  cases.push_back(expect_failure(make_case(
      "Neg", "rejects_u8", {random_tensor(DType::kU8, {4}, 8, 0, 255)})));
  cases.push_back(
      make_case("Not", "bool_3x4", {random_tensor(DType::kBool, {3, 4}, 9)}));
  cases.push_back(
      make_case("Not", "bool_scalar", {random_tensor(DType::kBool, {}, 10)}));
  cases.push_back(expect_failure(
      make_case("Not", "rejects_f32", {random_tensor(DType::kF32, {2}, 11)})));
}

void add_gelu_cases(std::vector<OpCase>& cases) {
  cases.push_back(make_case("Gelu", "exact_f32_3x7",
                            {random_tensor(DType::kF32, {3, 7}, 20, -4, 4)}));
  cases.push_back(make_case("Gelu", "tanh_f32_3x7",
                            {random_tensor(DType::kF32, {3, 7}, 21, -4, 4)},
                            {{"approximate", "tanh"}}));
  OpCase f16 = make_case("Gelu", "exact_f16_5",
                         {random_tensor(DType::kF16, {5}, 22, -4, 4)});
  cases.push_back(loosen_for(f16, DType::kF16));
  cases.push_back(make_case("Gelu", "tanh_f64_2x2x2",
                            {random_tensor(DType::kF64, {2, 2, 2}, 23, -4, 4)},
                            {{"approximate", "tanh"}}));
  cases.push_back(expect_failure(make_case(
      "Gelu", "rejects_unknown_approximation",
      {random_tensor(DType::kF32, {3}, 24)}, {{"approximate", "sigmoid"}})));
}

// Add, Sub, Mul, Div: same shapes, broadcasting both ways, every dtype
// class; integer divisors stay away from zero.
void add_arithmetic_cases(std::vector<OpCase>& cases) {
  uint64_t seed = 200;
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    bool div = std::string(op) == "Div";
    double lo = div ? 1.0 : -20.0;
    cases.push_back(
        make_case(op, "f32_same_3x4",
                  {random_tensor(DType::kF32, {3, 4}, ++seed),
                   random_tensor(DType::kF32, {3, 4}, ++seed, 0.5, 2.0)}));
    cases.push_back(
        make_case(op, "f32_row_broadcast",
                  {random_tensor(DType::kF32, {2, 3, 5}, ++seed),
                   random_tensor(DType::kF32, {5}, ++seed, 0.5, 2.0)}));
    cases.push_back(
        make_case(op, "f32_scalar_left",
                  {random_tensor(DType::kF32, {}, ++seed),
                   random_tensor(DType::kF32, {4, 3}, ++seed, 0.5, 2.0)}));
    OpCase f16 =
        make_case(op, "f16_both_ways",
                  {random_tensor(DType::kF16, {2, 1, 3}, ++seed),
                   random_tensor(DType::kF16, {4, 1}, ++seed, 0.5, 2.0)});
    cases.push_back(loosen_for(f16, DType::kF16));
    OpCase bf16 =
        make_case(op, "bf16_7",
                  {random_tensor(DType::kBF16, {7}, ++seed),
                   random_tensor(DType::kBF16, {7}, ++seed, 0.5, 2.0)});
    cases.push_back(loosen_for(bf16, DType::kBF16));
    cases.push_back(
        make_case(op, "f64_1x5",
                  {random_tensor(DType::kF64, {1, 5}, ++seed),
                   random_tensor(DType::kF64, {3, 1}, ++seed, 0.5, 2.0)}));
    cases.push_back(
        make_case(op, "i32_broadcast",
                  {random_tensor(DType::kI32, {3, 4}, ++seed, -100, 100),
                   random_tensor(DType::kI32, {4}, ++seed, lo, 20)}));
    cases.push_back(
        make_case(op, "i64_9",
                  {random_tensor(DType::kI64, {9}, ++seed, -1000, 1000),
                   random_tensor(DType::kI64, {9}, ++seed, lo, 50)}));
    cases.push_back(make_case(op, "u8_6",
                              {random_tensor(DType::kU8, {6}, ++seed, 0, 200),
                               random_tensor(DType::kU8, {6}, ++seed, 1, 20)}));
    cases.push_back(
        expect_failure(make_case(op, "rejects_mixed_dtypes",
                                 {random_tensor(DType::kF32, {3}, ++seed),
                                  random_tensor(DType::kI64, {3}, ++seed)})));
    cases.push_back(
        expect_failure(make_case(op, "rejects_unbroadcastable",
                                 {random_tensor(DType::kF32, {2, 3}, ++seed),
                                  random_tensor(DType::kF32, {2}, ++seed)})));
  }
  Tensor divisor = Tensor::from_vector<int32_t>({3}, {1, 0, 2});
  cases.push_back(expect_failure(
      make_case("Div", "rejects_integer_division_by_zero",
                {random_tensor(DType::kI32, {3}, 290, -9, 9), divisor})));
}

void add_pow_cases(std::vector<OpCase>& cases) {
  cases.push_back(make_case("Pow", "f32_f32",
                            {random_tensor(DType::kF32, {3, 4}, 300, 0.1, 3),
                             random_tensor(DType::kF32, {3, 4}, 301, -2, 2)}));
  cases.push_back(make_case("Pow", "f32_i64_broadcast",
                            {random_tensor(DType::kF32, {2, 3}, 302, -3, 3),
                             random_tensor(DType::kI64, {3}, 303, -2, 4)}));
  cases.push_back(make_case("Pow", "i32_i32",
                            {random_tensor(DType::kI32, {5}, 304, -5, 6),
                             random_tensor(DType::kI32, {5}, 305, 0, 5)}));
  cases.push_back(make_case("Pow", "i64_f32",
                            {random_tensor(DType::kI64, {4}, 306, 1, 50),
                             random_tensor(DType::kF32, {1}, 307, 0, 2)}));
  OpCase f16 = make_case("Pow", "f16_u8",
                         {random_tensor(DType::kF16, {6}, 308, 0.5, 2),
                          random_tensor(DType::kU8, {6}, 309, 0, 4)});
  cases.push_back(loosen_for(f16, DType::kF16));
  cases.push_back(
      expect_failure(make_case("Pow", "rejects_i8_base",
                               {random_tensor(DType::kI8, {2}, 310, 1, 4),
                                random_tensor(DType::kI8, {2}, 311, 1, 4)})));
}

void add_variadic_cases(std::vector<OpCase>& cases) {
  uint64_t seed = 400;
  for (const char* op : {"Max", "Min", "Sum"}) {
    cases.push_back(make_case(op, "f32_three_broadcast",
                              {random_tensor(DType::kF32, {2, 3, 4}, ++seed),
                               random_tensor(DType::kF32, {3, 1}, ++seed),
                               random_tensor(DType::kF32, {4}, ++seed)}));
    cases.push_back(
        make_case(op, "f32_single", {random_tensor(DType::kF32, {5}, ++seed)}));
    cases.push_back(make_case(op, "f64_two",
                              {random_tensor(DType::kF64, {3, 3}, ++seed),
                               random_tensor(DType::kF64, {3, 3}, ++seed)}));
    OpCase f16 = make_case(op, "f16_two",
                           {random_tensor(DType::kF16, {1, 5}, ++seed),
                            random_tensor(DType::kF16, {2, 1}, ++seed)});
    cases.push_back(loosen_for(f16, DType::kF16));
    OpCase ints = make_case(op, "i64_two",
                            {random_tensor(DType::kI64, {6}, ++seed, -99, 99),
                             random_tensor(DType::kI64, {6}, ++seed, -99, 99)});
    // Sum is float-only in ONNX.
    cases.push_back(std::string(op) == "Sum" ? expect_failure(ints) : ints);
  }
  cases.push_back(make_case("Max", "i32_broadcast",
                            {random_tensor(DType::kI32, {2, 3}, 430, -9, 9),
                             random_tensor(DType::kI32, {3}, 431, -9, 9)}));
  cases.push_back(make_case("Min", "u8_two",
                            {random_tensor(DType::kU8, {4}, 432, 0, 255),
                             random_tensor(DType::kU8, {4}, 433, 0, 255)}));
}

void add_logical_cases(std::vector<OpCase>& cases) {
  uint64_t seed = 500;
  for (const char* op : {"And", "Or", "Xor"}) {
    cases.push_back(make_case(op, "bool_3x4",
                              {random_tensor(DType::kBool, {3, 4}, ++seed),
                               random_tensor(DType::kBool, {3, 4}, ++seed)}));
    cases.push_back(make_case(op, "bool_broadcast",
                              {random_tensor(DType::kBool, {2, 1, 5}, ++seed),
                               random_tensor(DType::kBool, {3, 1}, ++seed)}));
    cases.push_back(
        expect_failure(make_case(op, "rejects_f32",
                                 {random_tensor(DType::kF32, {2}, ++seed),
                                  random_tensor(DType::kF32, {2}, ++seed)})));
  }
}

void add_compare_cases(std::vector<OpCase>& cases) {
  uint64_t seed = 600;
  for (const char* op :
       {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) {
    cases.push_back(make_case(op, "f32_broadcast",
                              {random_tensor(DType::kF32, {3, 4}, ++seed),
                               random_tensor(DType::kF32, {4}, ++seed)}));
    // Small integer ranges so that equal pairs occur.
    cases.push_back(
        make_case(op, "i64_3x5",
                  {random_tensor(DType::kI64, {3, 5}, ++seed, -3, 3),
                   random_tensor(DType::kI64, {3, 5}, ++seed, -3, 3)}));
    cases.push_back(make_case(op, "i32_scalar",
                              {random_tensor(DType::kI32, {7}, ++seed, -3, 3),
                               random_tensor(DType::kI32, {}, ++seed, -3, 3)}));
    cases.push_back(make_case(op, "f16_both_ways",
                              {random_tensor(DType::kF16, {2, 1}, ++seed),
                               random_tensor(DType::kF16, {1, 3}, ++seed)}));
    cases.push_back(
        expect_failure(make_case(op, "rejects_mixed_dtypes",
                                 {random_tensor(DType::kF32, {2}, ++seed),
                                  random_tensor(DType::kF64, {2}, ++seed)})));
  }
  cases.push_back(make_case("Equal", "bool_4",
                            {random_tensor(DType::kBool, {4}, 650),
                             random_tensor(DType::kBool, {4}, 651)}));
  cases.push_back(
      expect_failure(make_case("Less", "rejects_bool",
                               {random_tensor(DType::kBool, {4}, 652),
                                random_tensor(DType::kBool, {4}, 653)})));
}

void add_where_cases(std::vector<OpCase>& cases) {
  cases.push_back(make_case("Where", "f32_same_3x4",
                            {random_tensor(DType::kBool, {3, 4}, 700),
                             random_tensor(DType::kF32, {3, 4}, 701),
                             random_tensor(DType::kF32, {3, 4}, 702)}));
  cases.push_back(make_case("Where", "f32_three_way_broadcast",
                            {random_tensor(DType::kBool, {2, 1, 1}, 703),
                             random_tensor(DType::kF32, {3, 1}, 704),
                             random_tensor(DType::kF32, {5}, 705)}));
  cases.push_back(make_case("Where", "i64_scalar_y",
                            {random_tensor(DType::kBool, {6}, 706),
                             random_tensor(DType::kI64, {6}, 707, -1e6, 1e6),
                             random_tensor(DType::kI64, {}, 708, -9, 9)}));
  cases.push_back(make_case("Where", "bf16_4",
                            {random_tensor(DType::kBool, {4}, 709),
                             random_tensor(DType::kBF16, {4}, 710),
                             random_tensor(DType::kBF16, {1}, 711)}));
  cases.push_back(make_case("Where", "bool_values",
                            {random_tensor(DType::kBool, {2, 2}, 712),
                             random_tensor(DType::kBool, {2, 2}, 713),
                             random_tensor(DType::kBool, {2}, 714)}));
  cases.push_back(
      expect_failure(make_case("Where", "rejects_float_condition",
                               {random_tensor(DType::kF32, {3}, 715),
                                random_tensor(DType::kF32, {3}, 716),
                                random_tensor(DType::kF32, {3}, 717)})));
  cases.push_back(
      expect_failure(make_case("Where", "rejects_unbroadcastable",
                               {random_tensor(DType::kBool, {3}, 718),
                                random_tensor(DType::kF32, {2}, 719),
                                random_tensor(DType::kF32, {3}, 720)})));
}

// Integer divisors of both signs and never 0, so that the remainder's sign
// rule shows.
Tensor signed_divisors(DType dtype, std::vector<int64_t> dims, uint64_t seed) {
  Tensor t = random_tensor(dtype, std::move(dims), seed, 1, 9);
  for (int64_t i = 0; i < t.num_elements(); i += 2) {
    t.set_element_i64(i, -t.element_i64(i));
  }
  return t;
}

void add_mod_cases(std::vector<OpCase>& cases) {
  for (int64_t fmod : {0, 1}) {
    std::string suffix = fmod == 0 ? "" : "_fmod";
    AttrMap attrs = {{"fmod", fmod}};
    cases.push_back(
        make_case("Mod", "i32_broadcast" + suffix,
                  {random_tensor(DType::kI32, {3, 4}, 900 + fmod, -100, 100),
                   signed_divisors(DType::kI32, {4}, 902 + fmod)},
                  attrs));
    cases.push_back(
        make_case("Mod", "i64_9" + suffix,
                  {random_tensor(DType::kI64, {9}, 904 + fmod, -1000, 1000),
                   signed_divisors(DType::kI64, {9}, 906 + fmod)},
                  attrs));
    cases.push_back(
        make_case("Mod", "i8_2x3" + suffix,
                  {random_tensor(DType::kI8, {2, 3}, 908 + fmod, -120, 120),
                   signed_divisors(DType::kI8, {2, 1}, 910 + fmod)},
                  attrs));
    cases.push_back(
        make_case("Mod", "u8_6" + suffix,
                  {random_tensor(DType::kU8, {6}, 912 + fmod, 0, 250),
                   random_tensor(DType::kU8, {6}, 914 + fmod, 1, 20)},
                  attrs));
  }
  AttrMap fmod = {{"fmod", 1}};
  cases.push_back(make_case("Mod", "f32_fmod_broadcast",
                            {random_tensor(DType::kF32, {3, 5}, 920, -10, 10),
                             random_tensor(DType::kF32, {5}, 921, 0.5, 3)},
                            fmod));
  cases.push_back(make_case("Mod", "f64_fmod_negative_divisor",
                            {random_tensor(DType::kF64, {7}, 922, -10, 10),
                             random_tensor(DType::kF64, {7}, 923, -3, -0.5)},
                            fmod));
  OpCase f16 = make_case("Mod", "f16_fmod",
                         {random_tensor(DType::kF16, {2, 3}, 924, -4, 4),
                          random_tensor(DType::kF16, {1}, 925, 0.5, 2)},
                         fmod);
  cases.push_back(loosen_for(f16, DType::kF16));
  cases.push_back(expect_failure(
      make_case("Mod", "rejects_float_without_fmod",
                {random_tensor(DType::kF32, {3}, 926),
                 random_tensor(DType::kF32, {3}, 927, 0.5, 2)})));
  cases.push_back(expect_failure(
      make_case("Mod", "rejects_integer_modulo_by_zero",
                {random_tensor(DType::kI64, {3}, 928, -9, 9),
                 Tensor::from_vector<int64_t>({3}, {2, 0, 3})})));
}

void add_cast_cases(std::vector<OpCase>& cases) {
  const struct {
    const char* name;
    DType from;
    int64_t to;
    double lo, hi;
  } specs[] = {
      {"f32_to_i32", DType::kF32, 6, -100, 100},
      {"f32_to_f16", DType::kF32, 10, -100, 100},
      {"f32_to_bool", DType::kF32, 9, -1, 1},
      {"f64_to_bf16", DType::kF64, 16, -10, 10},
      {"f16_to_f64", DType::kF16, 11, -10, 10},
      {"i64_to_f32", DType::kI64, 1, -1e6, 1e6},
      {"i64_to_i8", DType::kI64, 3, -1000, 1000},
      {"u8_to_i32", DType::kU8, 6, 0, 255},
      {"bool_to_f32", DType::kBool, 1, 0, 1},
      {"i32_to_u8", DType::kI32, 2, 0, 255},
      {"bf16_to_f32", DType::kBF16, 1, -4, 4},
      {"i8_to_i64", DType::kI8, 7, -128, 127},
  };
  uint64_t seed = 800;
  for (const auto& spec : specs) {
    cases.push_back(
        make_case("Cast", spec.name,
                  {random_tensor(spec.from, {3, 5}, ++seed, spec.lo, spec.hi)},
                  {{"to", spec.to}}));
  }
  cases.push_back(make_case("Cast", "saturate_attribute",
                            {random_tensor(DType::kF32, {4}, 850)},
                            {{"to", 1}, {"saturate", 0}}));
  cases.push_back(expect_failure(
      make_case("Cast", "rejects_string_target",
                {random_tensor(DType::kF32, {2}, 851)}, {{"to", 8}})));
  cases.push_back(make_case("CastLike", "f32_like_i64",
                            {random_tensor(DType::kF32, {3, 5}, 860, -50, 50),
                             random_tensor(DType::kI64, {1}, 861)}));
  cases.push_back(make_case("CastLike", "i32_like_f16_scalar_target",
                            {random_tensor(DType::kI32, {7}, 862, -100, 100),
                             random_tensor(DType::kF16, {}, 863)}));
  cases.push_back(make_case("CastLike", "bool_like_f64",
                            {random_tensor(DType::kBool, {2, 3}, 864),
                             random_tensor(DType::kF64, {2}, 865)},
                            {{"saturate", 0}}));
  cases.push_back(make_case("CastLike", "f64_like_bf16",
                            {random_tensor(DType::kF64, {4}, 866, -4, 4),
                             random_tensor(DType::kBF16, {1}, 867)}));
  cases.push_back(expect_failure(
      make_case("CastLike", "rejects_missing_target",
                {random_tensor(DType::kF32, {2}, 868), Tensor()})));
}

// f32 sizes from which the CPU backend may run an op on oneDNN's eltwise
// primitive (16384 elements: backends/cpu/onednn/selection.cc, which
// picks Exp, Sigmoid and exact Gelu, and Add, Sub, Mul and Div).
void add_onednn_sized_cases(std::vector<OpCase>& cases) {
  uint64_t seed = 2000;
  for (const UnaryCaseSpec& spec : kUnarySpecs) {
    cases.push_back(make_case(
        spec.op, "f32_64x384_onednn_size",
        {random_tensor(DType::kF32, {64, 384}, ++seed, spec.lo, spec.hi)}));
  }
  // Binary arithmetic at oneDNN sizes: same shapes, a row broadcast, a
  // broadcast first operand (Add swaps it; Sub stays on the own kernel).
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    cases.push_back(
        make_case(op, "f32_64x384_onednn_size",
                  {random_tensor(DType::kF32, {64, 384}, ++seed, -3, 3),
                   random_tensor(DType::kF32, {64, 384}, ++seed, 0.5, 2)}));
    cases.push_back(
        make_case(op, "f32_64x384_row_onednn_size",
                  {random_tensor(DType::kF32, {64, 384}, ++seed, -3, 3),
                   random_tensor(DType::kF32, {384}, ++seed, 0.5, 2)}));
    cases.push_back(
        make_case(op, "f32_broadcast_first_onednn_size",
                  {random_tensor(DType::kF32, {64, 1}, ++seed, 0.5, 2),
                   random_tensor(DType::kF32, {64, 384}, ++seed, 0.5, 2)}));
  }
  cases.push_back(
      make_case("Gelu", "exact_f32_64x384_onednn_size",
                {random_tensor(DType::kF32, {64, 384}, ++seed, -4, 4)}));
}

// Random values with NaN, +inf and -inf planted at a stride (a 1-in-7 to
// 1-in-13 spread, so every word and half-word position of a packed bool
// output sees each class).
Tensor with_specials(DType dtype, std::vector<int64_t> dims, uint64_t seed) {
  Tensor t = random_tensor(dtype, std::move(dims), seed, -3.0, 3.0);
  const double specials[] = {std::numeric_limits<double>::quiet_NaN(),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity()};
  for (int64_t i = 0; i < t.num_elements(); i += 7 + (i % 7)) {
    t.set_element_f64(i, specials[(i / 3) % 3]);
  }
  return t;
}

void add_float_class_cases(std::vector<OpCase>& cases) {
  uint64_t seed = 40;
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
    const std::string name = std::string(dtype_name(dtype)) + "_5x13";
    cases.push_back(
        make_case("IsNaN", name, {with_specials(dtype, {5, 13}, ++seed)}));
    cases.push_back(
        make_case("IsInf", name, {with_specials(dtype, {5, 13}, ++seed)}));
  }
  const Tensor x = with_specials(DType::kF32, {3, 1, 11}, ++seed);
  cases.push_back(make_case("IsInf", "negative_only", {x},
                            {{"detect_positive", int64_t{0}}}));
  cases.push_back(make_case("IsInf", "positive_only", {x},
                            {{"detect_negative", int64_t{0}}}));
  cases.push_back(make_case(
      "IsInf", "neither", {x},
      {{"detect_negative", int64_t{0}}, {"detect_positive", int64_t{0}}}));
  cases.push_back(
      make_case("IsNaN", "scalar", {with_specials(DType::kF32, {}, ++seed)}));
  cases.push_back(expect_failure(make_case(
      "IsNaN", "rejects_i32", {random_tensor(DType::kI32, {3}, ++seed)})));
}

}  // namespace

void add_elementwise_cases(std::vector<OpCase>& cases) {
  add_unary_cases(cases);
  add_gelu_cases(cases);
  add_arithmetic_cases(cases);
  add_pow_cases(cases);
  add_variadic_cases(cases);
  add_logical_cases(cases);
  add_compare_cases(cases);
  add_where_cases(cases);
  add_cast_cases(cases);
  add_mod_cases(cases);
  add_onednn_sized_cases(cases);
  add_float_class_cases(cases);
}

}  // namespace seqrt
