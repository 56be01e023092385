#include "ops/rnn/rnn_common.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>

#include "ops/sequence/scan_common.h"

namespace seqrt {
namespace {

using Fn = RnnActivation::Fn;

struct ActivationInfo {
  Fn fn;
  int uses_alpha, uses_beta;  // 0 or 1 each
  float alpha, beta;          // the ONNX operator defaults
};

// Keys are lower case: names match case-insensitively, as ONNX Runtime's.
const std::map<std::string, ActivationInfo>& activation_table() {
  static const std::map<std::string, ActivationInfo> table = {
      {"relu", {Fn::kRelu, 0, 0, 0.0f, 0.0f}},
      {"tanh", {Fn::kTanh, 0, 0, 0.0f, 0.0f}},
      {"sigmoid", {Fn::kSigmoid, 0, 0, 0.0f, 0.0f}},
      {"affine", {Fn::kAffine, 1, 1, 1.0f, 0.0f}},
      {"leakyrelu", {Fn::kLeakyRelu, 1, 0, 0.01f, 0.0f}},
      {"thresholdedrelu", {Fn::kThresholdedRelu, 1, 0, 1.0f, 0.0f}},
      {"scaledtanh", {Fn::kScaledTanh, 1, 1, 1.0f, 1.0f}},
      {"hardsigmoid", {Fn::kHardSigmoid, 1, 1, 0.2f, 0.5f}},
      {"elu", {Fn::kElu, 1, 0, 1.0f, 0.0f}},
      {"softsign", {Fn::kSoftsign, 0, 0, 0.0f, 0.0f}},
      {"softplus", {Fn::kSoftplus, 0, 0, 0.0f, 0.0f}},
  };
  return table;
}

std::vector<std::string> default_activations(RnnKind kind) {
  switch (kind) {
    case RnnKind::kRnn:
      return {"Tanh"};
    case RnnKind::kGru:
      return {"Sigmoid", "Tanh"};
    case RnnKind::kLstm:
      return {"Sigmoid", "Tanh", "Tanh"};
  }
  return {};
}

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(ch));
  return s;
}

Status read_activations(const OpContext& ctx, RnnConfig& config) {
  std::vector<std::string> names = default_activations(config.kind);
  const size_t slots = names.size();
  if (ctx.has_attr("activations")) {
    names = ctx.attr_strings("activations");
    const size_t want = slots * static_cast<size_t>(config.directions);
    if (names.size() == slots && config.directions == 2) {
      std::vector<std::string> one = names;
      names.insert(names.end(), one.begin(), one.end());
    } else if (names.size() != want) {
      return ctx.error(
          "activations must list {} names ({} per direction), got {}", want,
          slots, names.size());
    }
  } else if (config.directions == 2) {
    std::vector<std::string> one = names;
    names.insert(names.end(), one.begin(), one.end());
  }
  std::vector<float> alphas, betas;
  if (ctx.has_attr("activation_alpha"))
    alphas = ctx.attr_floats("activation_alpha");
  if (ctx.has_attr("activation_beta"))
    betas = ctx.attr_floats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    auto it = activation_table().find(lower(name));
    if (it == activation_table().end()) {
      return ctx.error(
          "unknown activation '{}'; expected Relu, Tanh, Sigmoid, Affine, "
          "LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, "
          "Softsign or Softplus",
          name);
    }
    const ActivationInfo& info = it->second;
    RnnActivation act{info.fn, info.alpha, info.beta};
    if (info.uses_alpha && next_alpha < alphas.size())
      act.alpha = alphas[next_alpha++];
    if (info.uses_beta && next_beta < betas.size())
      act.beta = betas[next_beta++];
    config.activations.push_back(act);
  }
  return Status::ok();
}

// Binds every present input's dims; `shapes` follows the node's inputs.
Status bind_shapes(const OpContext& ctx, const RnnConfig& config,
                   const std::vector<std::optional<Shape>>& shapes,
                   DimBinder& binder) {
  auto shape = [&](size_t i) -> std::optional<Shape> {
    return i < shapes.size() ? shapes[i] : std::nullopt;
  };
  const std::string g = std::to_string(config.gates);
  const std::string gates_h = g + "*hidden_size";
  const std::string two_gates_h =
      std::to_string(2 * config.gates) + "*hidden_size";
  int64_t hidden = config.hidden;
  if (hidden < 0 && shape(kRnnR) && shape(kRnnR)->rank() == 3 &&
      (*shape(kRnnR))[2].is_fixed()) {
    hidden = (*shape(kRnnR))[2].value();
  }
  if (hidden < 0 && shape(kRnnW) && shape(kRnnW)->rank() == 3 &&
      (*shape(kRnnW))[1].is_fixed()) {
    const int64_t rows = (*shape(kRnnW))[1].value();
    if (rows % config.gates != 0) {
      return ctx.error("W must have {} = a multiple of {} rows, got {}",
                       gates_h, config.gates, shape(kRnnW)->to_string());
    }
    hidden = rows / config.gates;
  }
  SEQRT_RETURN_IF_ERROR(binder.expect(
      "direction", Shape({Dim(config.directions)}), {"num_directions"}));
  if (hidden >= 0) {
    SEQRT_RETURN_IF_ERROR(
        binder.expect("hidden_size",
                      Shape({Dim(hidden), Dim(config.gates * hidden),
                             Dim(2 * config.gates * hidden), Dim(3 * hidden)}),
                      {"hidden_size", gates_h, two_gates_h, "3*hidden_size"}));
  }
  const bool l0 = config.layout == 0;
  std::vector<std::string> x_names =
      l0 ? std::vector<std::string>{"seq_length", "batch_size", "input_size"}
         : std::vector<std::string>{"batch_size", "seq_length", "input_size"};
  std::vector<std::string> state_names =
      l0 ? std::vector<std::string>{"num_directions", "batch_size",
                                    "hidden_size"}
         : std::vector<std::string>{"batch_size", "num_directions",
                                    "hidden_size"};
  SEQRT_RETURN_IF_ERROR(binder.expect("X", shape(kRnnX), x_names));
  SEQRT_RETURN_IF_ERROR(binder.expect(
      "W", shape(kRnnW), {"num_directions", gates_h, "input_size"}));
  SEQRT_RETURN_IF_ERROR(binder.expect(
      "R", shape(kRnnR), {"num_directions", gates_h, "hidden_size"}));
  SEQRT_RETURN_IF_ERROR(
      binder.expect("B", shape(kRnnB), {"num_directions", two_gates_h}));
  SEQRT_RETURN_IF_ERROR(
      binder.expect("sequence_lens", shape(kRnnSequenceLens), {"batch_size"}));
  SEQRT_RETURN_IF_ERROR(
      binder.expect("initial_h", shape(kRnnInitialH), state_names));
  if (config.kind == RnnKind::kLstm) {
    SEQRT_RETURN_IF_ERROR(
        binder.expect("initial_c", shape(kRnnInitialC), state_names));
    SEQRT_RETURN_IF_ERROR(
        binder.expect("P", shape(kRnnP), {"num_directions", "3*hidden_size"}));
  }
  // Without hidden_size, G*hidden_size and hidden_size were bound apart.
  Dim gh = binder.dim(gates_h), h = binder.dim("hidden_size");
  if (gh.is_fixed() && h.is_fixed() && gh.value() != config.gates * h.value()) {
    return ctx.error("W and R must have {} = {} rows, got {}", gates_h,
                     config.gates * h.value(), gh.value());
  }
  return Status::ok();
}

Status check_dtypes(const OpContext& ctx, const RnnConfig& config,
                    const std::vector<DType>& dtypes) {
  const DType t = dtypes[kRnnX];
  if (!is_float(t)) {
    return ctx.error("X must be a float tensor, got {}", dtype_name(t));
  }
  static const char* kNames[] = {
      "X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};
  for (size_t i = 1; i < config.num_inputs() && i < dtypes.size(); ++i) {
    if (dtypes[i] == DType::kUndefined) continue;
    if (i == kRnnSequenceLens) {
      if (dtypes[i] != DType::kI32 && dtypes[i] != DType::kI64) {
        return ctx.error("sequence_lens must be i32, got {}",
                         dtype_name(dtypes[i]));
      }
    } else if (dtypes[i] != t) {
      return ctx.error("{} must have X's dtype {}, got {}", kNames[i],
                       dtype_name(t), dtype_name(dtypes[i]));
    }
  }
  return Status::ok();
}

}  // namespace

double RnnActivation::apply(double x) const {
  const double a = alpha, b = beta;
  switch (fn) {
    case Fn::kRelu:
      return x > 0.0 ? x : 0.0;
    case Fn::kTanh:
      return std::tanh(x);
    case Fn::kSigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case Fn::kAffine:
      return a * x + b;
    case Fn::kLeakyRelu:
      return x >= 0.0 ? x : a * x;
    case Fn::kThresholdedRelu:
      return x > a ? x : 0.0;
    case Fn::kScaledTanh:
      return a * std::tanh(b * x);
    case Fn::kHardSigmoid:
      return std::max(0.0, std::min(1.0, a * x + b));
    case Fn::kElu:
      return x >= 0.0 ? x : a * (std::exp(x) - 1.0);
    case Fn::kSoftsign:
      return x / (1.0 + std::abs(x));
    case Fn::kSoftplus:
      // log(1 + e^x) without overflow for large x.
      return x > 0.0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
  return x;
}

float RnnActivation::apply(float x) const {
  const float a = alpha, b = beta;
  switch (fn) {
    case Fn::kRelu:
      return x > 0.0f ? x : 0.0f;
    case Fn::kTanh:
      return std::tanh(x);
    case Fn::kSigmoid:
      return 1.0f / (1.0f + std::exp(-x));
    case Fn::kAffine:
      return a * x + b;
    case Fn::kLeakyRelu:
      return x >= 0.0f ? x : a * x;
    case Fn::kThresholdedRelu:
      return x > a ? x : 0.0f;
    case Fn::kScaledTanh:
      return a * std::tanh(b * x);
    case Fn::kHardSigmoid:
      return std::max(0.0f, std::min(1.0f, a * x + b));
    case Fn::kElu:
      return x >= 0.0f ? x : a * (std::exp(x) - 1.0f);
    case Fn::kSoftsign:
      return x / (1.0f + std::abs(x));
    case Fn::kSoftplus:
      return x > 0.0f ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
  return x;
}

Result<RnnConfig> rnn_config(const OpContext& ctx, RnnKind kind) {
  RnnConfig config;
  config.kind = kind;
  config.gates = kind == RnnKind::kLstm ? 4 : (kind == RnnKind::kGru ? 3 : 1);
  const std::string& direction = ctx.attr_string("direction");
  if (direction == "bidirectional") {
    config.directions = 2;
  } else if (direction == "reverse") {
    config.reverse = true;
  } else if (direction != "forward") {
    return ctx.error(
        "direction must be forward, reverse or bidirectional, got '{}'",
        direction);
  }
  config.layout = ctx.attr_int("layout");
  if (config.layout != 0 && config.layout != 1) {
    return ctx.error("layout must be 0 or 1, got {}", config.layout);
  }
  if (ctx.has_attr("clip")) {
    config.has_clip = true;
    config.clip = ctx.attr_float("clip");
    if (!(config.clip > 0.0f)) {
      return ctx.error("clip must be positive, got {}", config.clip);
    }
  }
  if (ctx.has_attr("hidden_size")) {
    config.hidden = ctx.attr_int("hidden_size");
    if (config.hidden < 1) {
      return ctx.error("hidden_size must be at least 1, got {}", config.hidden);
    }
  }
  if (kind == RnnKind::kLstm)
    config.input_forget = ctx.attr_int("input_forget") != 0;
  if (kind == RnnKind::kGru)
    config.linear_before_reset = ctx.attr_int("linear_before_reset") != 0;
  SEQRT_RETURN_IF_ERROR(read_activations(ctx, config));
  return config;
}

Status infer_rnn(InferContext& ctx, RnnKind kind) {
  SEQRT_ASSIGN_OR_RETURN(RnnConfig config, rnn_config(ctx, kind));
  std::vector<std::optional<Shape>> shapes;
  std::vector<DType> dtypes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    shapes.push_back(ctx.has_input(i) ? ctx.input_shape(i) : std::nullopt);
    dtypes.push_back(ctx.has_input(i) ? ctx.input_dtype(i) : DType::kUndefined);
  }
  SEQRT_RETURN_IF_ERROR(check_dtypes(ctx, config, dtypes));
  DimBinder binder(ctx);
  SEQRT_RETURN_IF_ERROR(bind_shapes(ctx, config, shapes, binder));
  const DType t = dtypes[kRnnX];
  const bool l0 = config.layout == 0;
  std::vector<std::string> y =
      l0 ? std::vector<std::string>{"seq_length", "num_directions",
                                    "batch_size", "hidden_size"}
         : std::vector<std::string>{"batch_size", "seq_length",
                                    "num_directions", "hidden_size"};
  std::vector<std::string> state =
      l0 ? std::vector<std::string>{"num_directions", "batch_size",
                                    "hidden_size"}
         : std::vector<std::string>{"batch_size", "num_directions",
                                    "hidden_size"};
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    ctx.set_output(i, t, binder.shape(i == kRnnY ? y : state));
  }
  return Status::ok();
}

Result<RnnDims> check_rnn(const KernelContext& ctx, const RnnConfig& config) {
  KernelInputTypes types = kernel_input_types(ctx, config.num_inputs());
  SEQRT_RETURN_IF_ERROR(check_dtypes(ctx, config, types.dtypes));
  DimBinder binder(ctx);
  SEQRT_RETURN_IF_ERROR(bind_shapes(ctx, config, types.shapes, binder));
  RnnDims dims{binder.size("seq_length"), binder.size("batch_size"),
               binder.size("input_size"), binder.size("hidden_size"),
               config.directions};
  if (const Tensor* lens = ctx.input(kRnnSequenceLens)) {
    for (int64_t i = 0; i < lens->num_elements(); ++i) {
      int64_t len = lens->element_i64(i);
      if (len < 0 || len > dims.seq) {
        return ctx.error("sequence_lens[{}] = {} is outside [0, {}]", i, len,
                         dims.seq);
      }
    }
  }
  return dims;
}

std::vector<int64_t> rnn_sequence_lengths(const KernelContext& ctx,
                                          const RnnDims& dims) {
  std::vector<int64_t> lens(static_cast<size_t>(dims.batch), dims.seq);
  if (const Tensor* t = ctx.input(kRnnSequenceLens)) {
    for (int64_t b = 0; b < dims.batch; ++b) {
      lens[static_cast<size_t>(b)] = t->element_i64(b);
    }
  }
  return lens;
}

std::vector<int64_t> rnn_y_dims(const RnnConfig& config, const RnnDims& d) {
  if (config.layout == 0) return {d.seq, d.directions, d.batch, d.hidden};
  return {d.batch, d.seq, d.directions, d.hidden};
}

std::vector<int64_t> rnn_state_dims(const RnnConfig& config, const RnnDims& d) {
  if (config.layout == 0) return {d.directions, d.batch, d.hidden};
  return {d.batch, d.directions, d.hidden};
}

Status run_rnn_reference(KernelContext& ctx, RnnKind kind, RnnCellFn cell) {
  SEQRT_ASSIGN_OR_RETURN(RnnConfig config, rnn_config(ctx, kind));
  SEQRT_ASSIGN_OR_RETURN(RnnDims d, check_rnn(ctx, config));
  const std::vector<int64_t> lens = rnn_sequence_lengths(ctx, d);
  const int64_t gh = config.gates * d.hidden;
  std::vector<double> x = to_f64(ctx.input(kRnnX));
  std::vector<double> w = to_f64(ctx.input(kRnnW));
  std::vector<double> r = to_f64(ctx.input(kRnnR));
  std::vector<double> b = to_f64(ctx.input(kRnnB));
  std::vector<double> h0 = to_f64(ctx.input(kRnnInitialH));
  std::vector<double> c0, p;
  if (kind == RnnKind::kLstm) {
    c0 = to_f64(ctx.input(kRnnInitialC));
    p = to_f64(ctx.input(kRnnP));
  }
  if (b.empty()) b.assign(static_cast<size_t>(d.directions * 2 * gh), 0.0);
  if (p.empty())
    p.assign(static_cast<size_t>(d.directions * 3 * d.hidden), 0.0);
  const size_t hsize = static_cast<size_t>(d.hidden);
  std::vector<double> y(static_cast<size_t>(d.seq * d.directions * d.batch) *
                        hsize);
  std::vector<double> yh(static_cast<size_t>(d.directions * d.batch) * hsize);
  std::vector<double> yc(yh.size());
  std::vector<double> h(hsize), c(hsize);
  for (int64_t dir = 0; dir < d.directions; ++dir) {
    RnnCellWeights weights{w.data() + dir * gh * d.input,
                           r.data() + dir * gh * d.hidden,
                           b.data() + dir * 2 * gh,
                           b.data() + dir * 2 * gh + gh,
                           p.data() + dir * 3 * d.hidden,
                           d.input,
                           d.hidden};
    for (int64_t bi = 0; bi < d.batch; ++bi) {
      const size_t state =
          static_cast<size_t>(rnn_state_row(config, d, dir, bi)) * hsize;
      for (size_t j = 0; j < hsize; ++j) {
        h[j] = h0.empty() ? 0.0 : h0[state + j];
        c[j] = c0.empty() ? 0.0 : c0[state + j];
      }
      const int64_t len = lens[static_cast<size_t>(bi)];
      for (int64_t s = 0; s < len; ++s) {
        const int64_t t = config.backwards(dir) ? len - 1 - s : s;
        const double* xt = x.data() + rnn_x_row(config, d, t, bi) * d.input;
        cell(config, dir, weights, xt, h.data(), c.data());
        std::copy(h.begin(), h.end(),
                  y.begin() + rnn_y_row(config, d, t, dir, bi) * d.hidden);
      }
      if (len == 0) continue;  // Y_h and Y_c stay zero, as ONNX Runtime's
      std::copy(h.begin(), h.end(), yh.begin() + state);
      std::copy(c.begin(), c.end(), yc.begin() + state);
    }
  }
  const DType dtype = ctx.input(kRnnX)->dtype();
  const std::vector<double>* results[] = {&y, &yh, &yc};
  for (size_t i = 0; i < ctx.num_outputs() && i < 3; ++i) {
    if (ctx.node().outputs[i] == kNoValue) continue;
    SEQRT_ASSIGN_OR_RETURN(
        Tensor * out,
        ctx.allocate_output(
            i, dtype,
            i == kRnnY ? rnn_y_dims(config, d) : rnn_state_dims(config, d)));
    store_f64(*results[i], *out);
  }
  return Status::ok();
}

std::vector<AttrSpec> rnn_common_attrs() {
  return {
      {"activation_alpha", AttrType::kFloats},
      {"activation_beta", AttrType::kFloats},
      {"activations", AttrType::kStrings},
      {"clip", AttrType::kFloat},
      {"direction",
       AttrType::kString,
       Attribute(std::string("forward")),
       false,
       {"forward", "reverse", "bidirectional"}},
      {"hidden_size", AttrType::kInt},
      {"layout", AttrType::kInt, Attribute(int64_t{0})},
  };
}

OpSchema rnn_schema(const char* name, const char* doc, RnnKind kind) {
  OpSchema s;
  s.name = name;
  s.doc = doc;
  s.inputs = {{"X"},
              {"W"},
              {"R"},
              {"B", true},
              {"sequence_lens", true},
              {"initial_h", true}};
  s.outputs = {{"Y", true}, {"Y_h", true}};
  if (kind == RnnKind::kLstm) {
    s.inputs.push_back({"initial_c", true});
    s.inputs.push_back({"P", true});
    s.outputs.push_back({"Y_c", true});
  }
  s.attrs = rnn_common_attrs();
  return s;
}

}  // namespace seqrt
