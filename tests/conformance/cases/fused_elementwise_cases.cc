// Conformance cases of seqrt::FusedElementwise: SiLU and the SwiGLU gate,
// every op a body may hold (each followed by a scalar constant so bodies
// have two nodes or more), sizes that are not multiples of the CPU block or
// vector width, broadcasts (last-axis vector, column, middle axis, scalar
// inputs), f16 and bf16, an empty tensor, and inputs that cannot broadcast
// or differ in dtype.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"
#include "tests/conformance/op_case.h"

namespace seqrt {
namespace {

using BodyFn =
    std::function<ValueId(GraphBuilder&, const std::vector<ValueId>&)>;

// A body whose inputs are `num_inputs` values of the broadcast output type.
std::shared_ptr<Graph> make_body(DType dtype, std::vector<int64_t> out_dims,
                                 size_t num_inputs, const BodyFn& fn) {
  GraphBuilder b("body");
  std::vector<ValueId> inputs;
  for (size_t i = 0; i < num_inputs; ++i) {
    inputs.push_back(
        b.input("x" + std::to_string(i), dtype, Shape::from_dims(out_dims)));
  }
  b.output(fn(b, inputs), "y");
  Result<Graph> graph = std::move(b).build();
  Status status = graph.is_ok() ? infer_graph(*graph) : graph.status();
  if (!status.is_ok()) {
    std::fprintf(stderr, "fused_elementwise_cases: bad body: %s\n",
                 status.to_string().c_str());
    std::abort();
  }
  return std::make_shared<Graph>(std::move(graph).value());
}

ValueId scalar(GraphBuilder& b, DType dtype, double value) {
  Tensor t = Tensor::allocate(dtype, {}).value();
  t.set_element_f64(0, value);
  return b.constant("c" + std::to_string(b.graph().values.size()), t);
}

OpCase fused_case(const std::string& name, std::vector<Tensor> inputs,
                  std::shared_ptr<Graph> body) {
  OpCase c = make_case("FusedElementwise", name, std::move(inputs),
                       {{"body", std::move(body)}});
  c.domain = kSeqrtDomain;
  return c;
}

ValueId silu(GraphBuilder& b, ValueId x) {
  return b.add("Mul", {x, b.add("Sigmoid", {x})});
}

void add_silu_cases(std::vector<OpCase>& cases) {
  auto silu_body = [](DType dtype, std::vector<int64_t> dims) {
    return make_body(dtype, dims, 1, [](GraphBuilder& b, const auto& in) {
      return silu(b, in[0]);
    });
  };
  auto gate_body = [](DType dtype, std::vector<int64_t> dims) {
    return make_body(dtype, dims, 2, [](GraphBuilder& b, const auto& in) {
      return b.add("Mul", {silu(b, in[0]), in[1]});
    });
  };
  cases.push_back(fused_case("silu_1000",
                             {random_tensor(DType::kF32, {1000}, 1, -6, 6)},
                             silu_body(DType::kF32, {1000})));
  cases.push_back(fused_case("silu_gate_3x1029",
                             {random_tensor(DType::kF32, {3, 1029}, 2, -6, 6),
                              random_tensor(DType::kF32, {3, 1029}, 3)},
                             gate_body(DType::kF32, {3, 1029})));
  // Several parallel tasks of several blocks each.
  cases.push_back(fused_case("silu_gate_2x40001",
                             {random_tensor(DType::kF32, {2, 40001}, 4, -6, 6),
                              random_tensor(DType::kF32, {2, 40001}, 5)},
                             gate_body(DType::kF32, {2, 40001})));
  cases.push_back(
      loosened(fused_case("silu_gate_f16_5x37",
                          {random_tensor(DType::kF16, {5, 37}, 6, -4, 4),
                           random_tensor(DType::kF16, {5, 37}, 7)},
                          gate_body(DType::kF16, {5, 37})),
               2e-3));
  cases.push_back(
      loosened(fused_case("silu_bf16_3x17",
                          {random_tensor(DType::kBF16, {3, 17}, 8, -4, 4)},
                          silu_body(DType::kBF16, {3, 17})),
               2e-2));
  cases.push_back(fused_case("silu_empty_0x5",
                             {Tensor::allocate(DType::kF32, {0, 5}).value()},
                             silu_body(DType::kF32, {0, 5})));
}

struct OpSpec {
  const char* op;
  double lo, hi;  // input range inside the op's domain
};

// op(x) · 1.5 for each unary op a body may hold.
void add_unary_op_cases(std::vector<OpCase>& cases) {
  const OpSpec specs[] = {
      {"Sqrt", 0.0, 4.0},  {"Exp", -3.0, 3.0},      {"Log", 0.05, 4.0},
      {"Neg", -3.0, 3.0},  {"Abs", -3.0, 3.0},      {"Reciprocal", 0.25, 4.0},
      {"Erf", -2.0, 2.0},  {"Tanh", -3.0, 3.0},     {"Sigmoid", -8.0, 8.0},
      {"Relu", -3.0, 3.0}, {"Softplus", -8.0, 8.0}, {"Gelu", -4.0, 4.0},
  };
  uint64_t seed = 100;
  for (const OpSpec& spec : specs) {
    std::string op = spec.op;
    auto body = make_body(
        DType::kF32, {7, 131}, 1, [&](GraphBuilder& b, const auto& in) {
          return b.add("Mul",
                       {b.add(op, {in[0]}), scalar(b, DType::kF32, 1.5)});
        });
    cases.push_back(fused_case(
        "unary_" + op + "_7x131",
        {random_tensor(DType::kF32, {7, 131}, ++seed, spec.lo, spec.hi)},
        body));
  }
  auto gelu_tanh =
      make_body(DType::kF32, {3, 65}, 1, [](GraphBuilder& b, const auto& in) {
        return b.add(
            "Sub", {b.add("Gelu", {in[0]}, {{"approximate", "tanh"}}), in[0]});
      });
  cases.push_back(fused_case(
      "unary_Gelu_tanh_3x65",
      {random_tensor(DType::kF32, {3, 65}, ++seed, -4, 4)}, gelu_tanh));
}

// (a op b) + 0.25 for each binary op, and Pow with constant exponents.
void add_binary_op_cases(std::vector<OpCase>& cases) {
  uint64_t seed = 200;
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"}) {
    std::string name = op;
    bool positive = name == "Pow" || name == "Div";
    auto body = make_body(DType::kF32, {9, 70}, 2,
                          [&](GraphBuilder& b, const auto& in) {
                            return b.add("Add", {b.add(name, {in[0], in[1]}),
                                                 scalar(b, DType::kF32, 0.25)});
                          });
    cases.push_back(fused_case(
        "binary_" + name + "_9x70",
        {random_tensor(DType::kF32, {9, 70}, ++seed, positive ? 0.1 : -2, 2),
         random_tensor(DType::kF32, {9, 70}, ++seed, positive ? 0.5 : -2, 2)},
        body));
  }
  for (double exponent : {2.0, 3.0, 0.5}) {
    auto body =
        make_body(DType::kF32, {515}, 1, [&](GraphBuilder& b, const auto& in) {
          ValueId e = scalar(b, DType::kF32, exponent);
          return b.add("Neg", {b.add("Pow", {in[0], e})});
        });
    cases.push_back(fused_case(
        "pow_scalar_" + std::to_string(static_cast<int>(exponent * 10)),
        {random_tensor(DType::kF32, {515}, ++seed, 0.0, 3.0)}, body));
  }
}

// Inputs broadcast to (4, 7, 33) in the ways models use.
void add_broadcast_cases(std::vector<OpCase>& cases) {
  const std::vector<int64_t> out = {4, 7, 33};
  // Relu((x + bias) · col − s) · mid, with s a one-element input.
  auto body =
      make_body(DType::kF32, out, 5, [](GraphBuilder& b, const auto& in) {
        ValueId h = b.add("Add", {in[0], in[1]});
        h = b.add("Sub", {b.add("Mul", {h, in[2]}), in[3]});
        return b.add("Mul", {b.add("Relu", {h}), in[4]});
      });
  cases.push_back(fused_case("broadcast_bias_column_scalar_middle",
                             {random_tensor(DType::kF32, out, 300),
                              random_tensor(DType::kF32, {33}, 301),
                              random_tensor(DType::kF32, {4, 7, 1}, 302),
                              random_tensor(DType::kF32, {1}, 303),
                              random_tensor(DType::kF32, {7, 1}, 304)},
                             body));
  // The full-shape input is not the first one, and a rank-0 input.
  auto gate =
      make_body(DType::kF32, out, 3, [](GraphBuilder& b, const auto& in) {
        ValueId h = b.add("Add", {in[0], in[1]});
        return b.add("Div", {silu(b, h), in[2]});
      });
  cases.push_back(
      fused_case("broadcast_vector_first",
                 {random_tensor(DType::kF32, {33}, 305),
                  random_tensor(DType::kF32, out, 306), Tensor::scalar(1.75f)},
                 gate));
  // Only vectors: the output is their outer sum.
  auto outer =
      make_body(DType::kF32, {65, 40}, 2, [](GraphBuilder& b, const auto& in) {
        return b.add("Tanh", {b.add("Add", {in[0], in[1]})});
      });
  cases.push_back(fused_case("broadcast_outer_65x40",
                             {random_tensor(DType::kF32, {65, 1}, 307),
                              random_tensor(DType::kF32, {40}, 308)},
                             outer));
}

void add_failure_cases(std::vector<OpCase>& cases) {
  auto body =
      make_body(DType::kF32, {3, 4}, 2, [](GraphBuilder& b, const auto& in) {
        return b.add("Mul", {silu(b, in[0]), in[1]});
      });
  cases.push_back(
      expect_failure(fused_case("rejects_unbroadcastable",
                                {random_tensor(DType::kF32, {3, 4}, 400),
                                 random_tensor(DType::kF32, {5}, 401)},
                                body)));
  cases.push_back(
      expect_failure(fused_case("rejects_mixed_dtypes",
                                {random_tensor(DType::kF32, {3, 4}, 402),
                                 random_tensor(DType::kF16, {3, 4}, 403)},
                                body)));
}

}  // namespace

void add_fused_elementwise_cases(std::vector<OpCase>& cases) {
  add_silu_cases(cases);
  add_unary_op_cases(cases);
  add_binary_op_cases(cases);
  add_broadcast_cases(cases);
  add_failure_cases(cases);
}

}  // namespace seqrt
