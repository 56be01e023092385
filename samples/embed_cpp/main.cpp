// embed_cpp MODEL [BACKEND]: seqrt from C++ (seqrt.hpp, RAII over the C
// API). Does what samples/embed_c does — prints the model's inputs and
// outputs, runs it once over a whole sequence, then decodes the sequence
// through a Stream (prefill, then one step per position) — and prints the
// same lines, so the two programs' outputs can be compared. Inputs are
// borrowed from std::vectors without a copy.
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <seqrt/seqrt.hpp>

namespace {

constexpr int kPrompt = 4, kSteps = 6, kTotal = kPrompt + kSteps;

// A non-state input or output with exactly one symbolic (sequence) dim.
struct Port {
  seqrt::ValueInfo info;
  size_t seq_axis = 0;
  int64_t outer = 1, inner = 1;  // elements before and after that axis
};

bool is_state(const seqrt::Model& model, const std::string& name) {
  for (const auto& [past, present] : model.state_pairs()) {
    if (name == past || name == present) return true;
  }
  return false;
}

// Prints every value as "input x: f32 (1,2,seq,8)"; returns the first
// non-state one.
Port describe(const seqrt::Model& model, const char* what,
              const std::vector<seqrt::ValueInfo>& values) {
  const seqrt::ValueInfo* chosen = nullptr;
  for (const seqrt::ValueInfo& value : values) {
    std::printf("%s %s: %s (", what, value.name.c_str(),
                seqrt_dtype_name(value.dtype));
    for (size_t axis = 0; axis < value.dims.size(); ++axis) {
      std::printf("%s", axis > 0 ? "," : "");
      if (!value.symbols[axis].empty()) {
        std::printf("%s", value.symbols[axis].c_str());
      } else {
        std::printf("%lld", static_cast<long long>(value.dims[axis]));
      }
    }
    bool state = is_state(model, value.name);
    std::printf(")%s\n", state ? " [state]" : "");
    if (!chosen && !state) chosen = &value;
  }
  if (!chosen) throw std::runtime_error(std::string("no non-state ") + what);
  Port port{*chosen};
  int symbols = 0;
  for (size_t axis = 0; axis < port.info.dims.size(); ++axis) {
    if (port.info.dims[axis] < 0) port.seq_axis = axis, ++symbols;
  }
  if (symbols != 1) {
    throw std::runtime_error(what + (" '" + port.info.name) +
                             "' needs exactly one symbolic (sequence) dim");
  }
  for (size_t axis = 0; axis < port.info.dims.size(); ++axis) {
    if (axis < port.seq_axis) port.outer *= port.info.dims[axis];
    if (axis > port.seq_axis) port.inner *= port.info.dims[axis];
  }
  return port;
}

// Positions [begin, end) of the deterministic sequence embed_c feeds too.
std::vector<float> input_values(const Port& port, int begin, int end) {
  int64_t length = end - begin;
  std::vector<float> values(port.outer * length * port.inner);
  for (int64_t o = 0; o < port.outer; ++o)
    for (int64_t t = 0; t < length; ++t)
      for (int64_t i = 0; i < port.inner; ++i)
        values[(o * length + t) * port.inner + i] = static_cast<float>(std::sin(
            0.37 * static_cast<double>(begin + t) +
            0.11 * static_cast<double>(i) + 0.5 * static_cast<double>(o)));
  return values;
}

std::vector<int64_t> dims_for(const Port& port, int length) {
  std::vector<int64_t> dims = port.info.dims;
  dims[port.seq_axis] = length;
  return dims;
}

// Element (o = 0, position t, i = 0) of an f32 output.
float first_at(const Port& port, const seqrt::Tensor& tensor, int64_t t) {
  return tensor.data_as<float>()[t * port.inner];
}

int run(const std::string& path, const std::string& backend) {
  std::printf("seqrt %s (headers %s, ABI %d)\n", seqrt::version().c_str(),
              SEQRT_VERSION_STRING, seqrt_abi_version());
  seqrt::Model model = seqrt::Model::load_file(path);
  std::printf("model %s: %zu ops\n", model.name().c_str(), model.op_count());
  Port in = describe(model, "input", model.inputs());
  Port out = describe(model, "output", model.outputs());

  seqrt::SessionOptions options;
  if (!backend.empty()) options.backend(backend);
  seqrt::Session session(model, options);
  std::printf("backend %s on %s\n", session.backend_name().c_str(),
              session.device_name().c_str());

  std::vector<float> all = input_values(in, 0, kTotal);
  seqrt::Tensor whole_input = seqrt::Tensor::borrow(dims_for(in, kTotal), all);
  seqrt::Tensor whole =
      std::move(session.run({{in.info.name, whole_input}}, {out.info.name})[0]);
  std::printf("run: %d positions, %s[last] = %.6f\n", kTotal,
              out.info.name.c_str(), first_at(out, whole, kTotal - 1));

  seqrt::Stream stream(session);
  std::vector<float> prompt_values = input_values(in, 0, kPrompt);
  seqrt::Tensor prompt =
      seqrt::Tensor::borrow(dims_for(in, kPrompt), prompt_values);
  seqrt::Tensor prefilled =
      std::move(stream.prefill({{in.info.name, prompt}}, {out.info.name})[0]);
  std::printf("prefill: %d positions, %s[last] = %.6f\n", kPrompt,
              out.info.name.c_str(), first_at(out, prefilled, kPrompt - 1));
  int mismatches = 0;
  for (int t = kPrompt; t < kTotal; ++t) {
    std::vector<float> values = input_values(in, t, t + 1);
    seqrt::Tensor position = seqrt::Tensor::borrow(dims_for(in, 1), values);
    std::vector<seqrt::Tensor> stepped =
        stream.step({{in.info.name, position}}, {out.info.name});
    float got = first_at(out, stepped[0], 0);
    float want = first_at(out, whole, t);
    bool same = std::fabs(got - want) <= 1e-4f * (1.0f + std::fabs(want));
    mismatches += same ? 0 : 1;
    std::printf("step %d: %s = %.6f%s\n", t, out.info.name.c_str(), got,
                same ? "" : " (differs from the whole-sequence run)");
  }
  std::printf("%s\n", mismatches == 0 ? "stream matches the whole-sequence run"
                                      : "stream DIFFERS from the whole run");
  return mismatches == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: embed_cpp MODEL [BACKEND]\n");
    return 2;
  }
  try {
    return run(argv[1], argc == 3 ? argv[2] : "");
  } catch (const seqrt::Error& error) {
    std::fprintf(stderr, "embed_cpp: error: %s: %s\n",
                 seqrt_status_name(error.code()), error.what());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "embed_cpp: error: %s\n", error.what());
  }
  return 1;
}
