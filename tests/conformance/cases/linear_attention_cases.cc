// ONNX LinearAttention (opset 27) cases: the four update rules, per-key and
// per-head decay, per-head and shared beta, GQA and MQA, with and without a
// past state, decode steps and chunked prefill, half precision, bad inputs.
#include <string>

#include "tests/conformance/op_case.h"

namespace seqrt {
namespace {

struct Spec {
  std::string rule;
  int64_t b = 1, t = 20, q_heads = 2, kv_heads = 2, dk = 8, dv = 8;
  bool past = false;
  bool per_key_decay = false;
  bool shared_beta = false;
  int64_t chunk = 64;
  DType dtype = DType::kF32;
};

OpCase la_case(const std::string& name, const Spec& s, uint64_t seed) {
  const DType dt = s.dtype;
  // Small keys keep the delta rules' updates contractive, as L2-normalised
  // keys do in real models.
  std::vector<Tensor> inputs = {
      random_tensor(dt, {s.b, s.t, s.q_heads * s.dk}, seed),
      random_tensor(dt, {s.b, s.t, s.kv_heads * s.dk}, seed + 1, -0.35, 0.35),
      random_tensor(dt, {s.b, s.t, s.kv_heads * s.dv}, seed + 2),
      s.past ? random_tensor(dt, {s.b, s.kv_heads, s.dk, s.dv}, seed + 3)
             : Tensor(),
      Tensor(),
      Tensor()};
  bool gated = s.rule == "gated" || s.rule == "gated_delta";
  bool delta = s.rule == "delta" || s.rule == "gated_delta";
  if (gated) {
    int64_t width = s.per_key_decay ? s.kv_heads * s.dk : s.kv_heads;
    inputs[4] = random_tensor(dt, {s.b, s.t, width}, seed + 4, -0.5, 0.0);
  }
  if (delta) {
    inputs[5] = random_tensor(dt, {s.b, s.t, s.shared_beta ? 1 : s.kv_heads},
                              seed + 5, 0.0, 1.0);
  }
  AttrMap attrs = {{"update_rule", Attribute(s.rule)},
                   {"q_num_heads", Attribute(s.q_heads)},
                   {"kv_num_heads", Attribute(s.kv_heads)},
                   {"chunk_size", Attribute(s.chunk)}};
  OpCase c = make_case("LinearAttention", name, std::move(inputs),
                       std::move(attrs), 2);
  return loosened(std::move(c), dt == DType::kF32 ? 1e-4 : 2e-2);
}

void add_rules(std::vector<OpCase>& cases) {
  uint64_t seed = 100;
  for (const char* rule : {"linear", "gated", "delta", "gated_delta"}) {
    for (bool past : {false, true}) {
      Spec s;
      s.rule = rule;
      s.past = past;
      cases.push_back(la_case(
          std::string(rule) + (past ? "_with_past" : "_no_past"), s, seed));
      seed += 10;
    }
  }
  Spec key{"gated"};
  key.per_key_decay = true;
  key.past = true;
  cases.push_back(la_case("gated_per_key_decay", key, 200));
  key.rule = "gated_delta";
  key.shared_beta = true;
  cases.push_back(la_case("gated_delta_per_key_shared_beta", key, 210));
}

void add_heads_and_lengths(std::vector<OpCase>& cases) {
  Spec gqa{"gated_delta"};
  gqa.q_heads = 4;
  gqa.kv_heads = 2;
  gqa.past = true;
  cases.push_back(la_case("gqa", gqa, 300));
  Spec mqa{"gated"};
  mqa.q_heads = 4;
  mqa.kv_heads = 1;
  mqa.t = 70;
  mqa.chunk = 16;
  cases.push_back(la_case("mqa_chunked", mqa, 310));
  for (const char* rule : {"linear", "gated", "gated_delta"}) {
    Spec step{rule};
    step.t = 1;
    step.past = true;
    step.b = 2;
    cases.push_back(la_case(std::string(rule) + "_decode_step", step, 320));
  }
  for (int64_t chunk : {16, 64, 512}) {
    Spec s{"gated"};
    s.t = 300;
    s.q_heads = 4;
    s.kv_heads = 2;
    s.dk = 16;
    s.dv = 8;
    s.past = true;
    s.chunk = chunk;
    cases.push_back(
        la_case("gated_t300_chunk" + std::to_string(chunk), s, 330 + chunk));
  }
  Spec lin{"linear"};
  lin.t = 129;
  lin.dk = 4;
  lin.dv = 12;
  lin.chunk = 64;
  cases.push_back(la_case("linear_t129_dk_ne_dv", lin, 340));
  Spec half{"gated_delta"};
  half.dtype = DType::kF16;
  half.past = true;
  cases.push_back(la_case("gated_delta_f16", half, 350));
  Spec scaled{"linear"};
  OpCase explicit_scale = la_case("explicit_scale", scaled, 360);
  explicit_scale.attrs["scale"] = Attribute(0.25f);
  cases.push_back(std::move(explicit_scale));
}

void add_failures(std::vector<OpCase>& cases) {
  Spec s{"gated"};
  OpCase heads = la_case("q_heads_not_multiple", s, 400);
  heads.attrs["q_num_heads"] = Attribute(int64_t{3});
  cases.push_back(expect_failure(std::move(heads)));
  OpCase no_decay = la_case("gated_without_decay", s, 410);
  no_decay.inputs[4] = Tensor();
  cases.push_back(expect_failure(std::move(no_decay)));
  OpCase no_beta = la_case("delta_without_beta", Spec{"linear"}, 420);
  no_beta.attrs["update_rule"] = Attribute("delta");
  cases.push_back(expect_failure(std::move(no_beta)));
  Spec past{"linear"};
  past.past = true;
  OpCase bad_past = la_case("past_state_shape", past, 430);
  bad_past.inputs[3] = random_tensor(DType::kF32, {1, 2, 8, 7}, 431);
  cases.push_back(expect_failure(std::move(bad_past)));
  OpCase bad_key = la_case("key_width", Spec{"linear"}, 440);
  bad_key.inputs[1] = random_tensor(DType::kF32, {1, 20, 12}, 441);
  cases.push_back(expect_failure(std::move(bad_key)));
}

}  // namespace

void add_linear_attention_cases(std::vector<OpCase>& cases) {
  add_rules(cases);
  add_heads_and_lengths(cases);
  add_failures(cases);
}

}  // namespace seqrt
