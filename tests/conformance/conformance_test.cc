// Runs every op case on every compiled backend and compares with the op's
// reference kernel called directly. A new backend is covered by adding it
// to runtime/backend_registry.cc; a new op by adding its cases.
//
// A backend skips a case only when the case is on its checked-in list
// (unsupported_<backend>.txt: "Op/case  # reason") or when this machine has
// no device for it (tests/device_skip.h). An unlisted refusal fails, and
// so does a listed case that runs. With SEQRT_VULKAN_MAX_GROUPS or
// SEQRT_VULKAN_MAX_BINDING set (lowered device limits), a case may also end
// in a clear kLimitExceeded refusal, never in a wrong answer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include <fmt/format.h>

#include "backends/reference/reference_backend.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"
#include "ops/registry.h"
#include "runtime/backend_registry.h"
#include "tests/conformance/op_case.h"
#include "tests/device_skip.h"
#include "tests/onnx_node/expected_failures.h"

namespace seqrt {
namespace {

struct BuiltCase {
  Graph graph;
  std::vector<Tensor> graph_inputs;  // in graph-input order
};

Result<BuiltCase> build_case(const OpCase& c) {
  GraphBuilder builder(c.op);
  BuiltCase built;
  std::vector<ValueId> ids;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Tensor& tensor = c.inputs[i];
    std::string name = "in" + std::to_string(i);
    if (tensor.empty()) {
      ids.push_back(kNoValue);
    } else if (i < c.constant_inputs.size() && c.constant_inputs[i]) {
      ids.push_back(builder.constant(name, tensor));
    } else {
      ids.push_back(builder.input(name, tensor.dtype(), tensor.shape()));
      built.graph_inputs.push_back(tensor);
    }
  }
  for (const auto& [name, tensor] : c.outer_values) {
    builder.input(name, tensor.dtype(), tensor.shape());
    built.graph_inputs.push_back(tensor);
  }
  NodeOptions options;
  options.name = c.name;
  options.domain = c.domain;
  for (size_t i = 0; i < c.num_outputs; ++i) {
    options.output_names.push_back("out" + std::to_string(i));
  }
  std::vector<ValueId> outs =
      builder.add_node(c.op, ids, c.attrs, c.num_outputs, options);
  for (ValueId id : outs) builder.output(id);
  SEQRT_ASSIGN_OR_RETURN(built.graph, std::move(builder).build());
  SEQRT_RETURN_IF_ERROR(infer_graph(built.graph));
  return built;
}

Result<std::vector<Tensor>> run_reference_kernel(const OpCase& c) {
  const OpSchema* schema = OpRegistry::global().find(c.domain, c.op);
  if (schema == nullptr) return not_found("no op {}", c.op);
  Node node;
  node.name = c.name;
  node.op = c.op;
  node.domain = c.domain;
  node.attrs = c.attrs;
  std::vector<const Tensor*> args;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    node.inputs.push_back(c.inputs[i].empty() ? kNoValue
                                              : static_cast<ValueId>(i));
    args.push_back(c.inputs[i].empty() ? nullptr : &c.inputs[i]);
  }
  for (size_t i = 0; i < c.num_outputs; ++i) {
    node.outputs.push_back(static_cast<ValueId>(c.inputs.size() + i));
  }
  SEQRT_RETURN_IF_ERROR(check_node(node, *schema));
  // Subgraphs see the case's values under their graph names (build_case).
  std::map<std::string, Tensor> scope(c.outer_values.begin(),
                                      c.outer_values.end());
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.inputs[i].empty()) scope["in" + std::to_string(i)] = c.inputs[i];
  }
  SubgraphRunner runner = [&scope](const Graph& body,
                                   const std::vector<Tensor>& inputs) {
    return run_reference_graph(body, inputs, &scope);
  };
  KernelContext ctx(node, *schema, std::move(args), runner);
  SEQRT_RETURN_IF_ERROR(schema->reference(ctx));
  return std::move(ctx.outputs());
}

// One backend per name for the whole run (opening a device per case cost
// more than the cases), or its creation error; main() closes them before
// the leak check at exit.
std::map<std::string, Result<std::unique_ptr<Backend>>>& open_backends() {
  static std::map<std::string, Result<std::unique_ptr<Backend>>> backends;
  return backends;
}

Result<Backend*> shared_backend(const std::string& name) {
  auto& backends = open_backends();
  auto it = backends.find(name);
  if (it == backends.end()) {
    it = backends.emplace(name, create_backend(name)).first;
  }
  if (!it->second.is_ok()) return it->second.status();
  return it->second.value().get();
}

Result<std::vector<Tensor>> run_on_backend(Backend& backend, const OpCase& c) {
  SEQRT_ASSIGN_OR_RETURN(BuiltCase built, build_case(c));
  SEQRT_ASSIGN_OR_RETURN(auto executable,
                         backend.compile(built.graph, CompileOptions{}));
  return executable->run(built.graph_inputs);
}

std::string case_key(const OpCase& c) { return c.op + "/" + c.name; }

// unsupported_<backend>.txt; a malformed list fails every case of it.
const Result<onnx_node::ExpectedFailures>& unsupported_list(
    const std::string& backend) {
  static std::map<std::string, Result<onnx_node::ExpectedFailures>> lists;
  auto it = lists.find(backend);
  if (it == lists.end()) {
    it = lists
             .emplace(backend, onnx_node::read_expected_failures(fmt::format(
                                   "{}/unsupported_{}.txt",
                                   SEQRT_CONFORMANCE_LISTS_DIR, backend)))
             .first;
  }
  return it->second;
}

// Lowered Vulkan limits (device.h): refusing at a limit is then an answer.
bool limits_lowered() {
  for (const char* name :
       {"SEQRT_VULKAN_MAX_GROUPS", "SEQRT_VULKAN_MAX_BINDING"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && value[0] != '\0') return true;
  }
  return false;
}

// What the cases of this run came to, per backend, printed at the end.
struct Tally {
  int matched = 0;
  int listed = 0;     // skipped: on the backend's unsupported list
  int no_device = 0;  // skipped: no device for the backend here
  int refused_at_limit = 0;
  int failed = 0;
};
std::map<std::string, Tally>& tallies() {
  static std::map<std::string, Tally> all;
  return all;
}

void expect_close(const Tensor& got, const Tensor& want, const OpCase& c,
                  size_t output) {
  ASSERT_EQ(got.dtype(), want.dtype()) << "output " << output;
  ASSERT_EQ(got.dims(), want.dims()) << "output " << output;
  int reported = 0;
  for (int64_t i = 0; i < want.num_elements() && reported < 5; ++i) {
    double w = want.element_f64(i);
    double g = got.element_f64(i);
    bool ok = (std::isnan(w) && std::isnan(g)) || w == g ||
              std::abs(g - w) <= c.atol + c.rtol * std::abs(w);
    if (!ok) {
      ADD_FAILURE() << "output " << output << " element " << i << ": got " << g
                    << ", want " << w;
      ++reported;
    }
  }
}

// The inferred types must describe what the kernel computes.
void expect_inference_matches(const Graph& graph,
                              const std::vector<Tensor>& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Value& value = graph.value(graph.outputs[i]);
    EXPECT_EQ(value.dtype, outputs[i].dtype())
        << "inferred dtype of output " << i;
    if (!value.shape) continue;
    ASSERT_EQ(value.shape->rank(), outputs[i].rank())
        << "inferred rank of output " << i;
    for (size_t d = 0; d < value.shape->rank(); ++d) {
      const Dim& dim = (*value.shape)[d];
      if (dim.is_fixed()) {
        EXPECT_EQ(dim.value(), outputs[i].dim(d))
            << "inferred dim " << d << " of output " << i;
      }
    }
  }
}

struct Param {
  std::string backend;
  const OpCase* op_case;
};

// Names the case in test logs instead of gtest's byte dump.
void PrintTo(const Param& param, std::ostream* out) {
  *out << param.backend << ":" << param.op_case->op << "/"
       << param.op_case->name;
}

class Conformance : public ::testing::TestWithParam<Param> {};

Status backend_supports(Backend& backend, const OpCase& c) {
  SEQRT_ASSIGN_OR_RETURN(BuiltCase built, build_case(c));
  return backend.supports(built.graph, built.graph.nodes.front());
}

// Tallies the case when its test ends, however it ends (an ASSERT returns
// early): failed when it failed, else matched or what count_as() said.
class CaseOutcome {
 public:
  explicit CaseOutcome(Tally& tally) : tally_(tally) {}
  ~CaseOutcome() {
    ++(::testing::Test::HasFailure() ? tally_.failed : tally_.*counter_);
  }
  void count_as(int Tally::*counter) { counter_ = counter; }

 private:
  Tally& tally_;
  int Tally::*counter_ = &Tally::matched;
};

TEST_P(Conformance, MatchesReference) {
  const Param& p = GetParam();
  const OpCase& c = *p.op_case;
  Tally& tally = tallies()[p.backend];
  const auto& list = unsupported_list(p.backend);
  ASSERT_TRUE(list.is_ok()) << list.status().to_string();
  const auto listed = list->find(case_key(c));
  Result<Backend*> backend = shared_backend(p.backend);
  if (!backend.is_ok() &&
      device_skip::may_skip_for_no_device(p.backend, backend.status())) {
    ++tally.no_device;
    GTEST_SKIP() << backend.status().message();
  }
  CaseOutcome outcome(tally);
  ASSERT_TRUE(backend.is_ok()) << backend.status().to_string();
  if (c.expect_error) {
    // Refused anywhere (building, supports, compile, run) with a message.
    ASSERT_EQ(listed, list->end()) << "a bad case needs no listing";
    Result<std::vector<Tensor>> want = run_reference_kernel(c);
    Result<std::vector<Tensor>> got = run_on_backend(**backend, c);
    EXPECT_FALSE(want.is_ok()) << "reference kernel accepted a bad case";
    ASSERT_FALSE(got.is_ok()) << p.backend << " accepted a bad case";
    EXPECT_FALSE(got.status().message().empty());
    return;
  }
  Status supported = backend_supports(**backend, c);
  if (supported.code() == StatusCode::kUnsupported) {
    ASSERT_NE(listed, list->end())
        << p.backend << " refuses " << case_key(c) << " but it is not on "
        << "unsupported_" << p.backend << ".txt; if the refusal is meant, "
        << "add the line:\n"
        << case_key(c) << "  # " << supported.message();
    outcome.count_as(&Tally::listed);
    GTEST_SKIP() << listed->second;
  }
  ASSERT_EQ(listed, list->end())
      << case_key(c) << " is on unsupported_" << p.backend << ".txt ("
      << listed->second << ") but " << p.backend
      << " supports it now: remove the line";
  ASSERT_TRUE(supported.is_ok()) << supported.to_string();
  Result<std::vector<Tensor>> want = run_reference_kernel(c);
  Result<std::vector<Tensor>> got = run_on_backend(**backend, c);
  if (!got.is_ok() && limits_lowered() &&
      got.status().code() == StatusCode::kLimitExceeded) {
    outcome.count_as(&Tally::refused_at_limit);
    return;
  }
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_EQ(got->size(), want->size());
  Result<BuiltCase> built = build_case(c);
  ASSERT_TRUE(built.is_ok()) << built.status().to_string();
  expect_inference_matches(built->graph, *want);
  for (size_t i = 0; i < want->size(); ++i) {
    expect_close((*got)[i], (*want)[i], c, i);
  }
}

std::vector<Param> all_params() {
  std::vector<Param> params;
  for (const std::string& backend : compiled_backends()) {
    for (const OpCase& c : all_op_cases()) params.push_back({backend, &c});
  }
  return params;
}

// Every line of every list names a case that exists.
TEST(ConformanceCoverage, UnsupportedListsNameRealCases) {
  std::set<std::string> keys;
  for (const OpCase& c : all_op_cases()) keys.insert(case_key(c));
  for (const std::string& backend : compiled_backends()) {
    const auto& list = unsupported_list(backend);
    ASSERT_TRUE(list.is_ok()) << list.status().to_string();
    for (const auto& [key, reason] : *list) {
      EXPECT_TRUE(keys.count(key)) << "unsupported_" << backend << ".txt names "
                                   << key << ", which is no case";
    }
  }
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  std::string name = info.param.backend + "_" + info.param.op_case->op + "_" +
                     info.param.op_case->name;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllOps, Conformance, ::testing::ValuesIn(all_params()),
                         param_name);

// Every op of ops/op_list.def (the registry is built from it) has a case.
TEST(ConformanceCoverage, EveryOpHasCases) {
  std::set<std::string> covered;
  for (const OpCase& c : all_op_cases()) covered.insert(c.domain + "::" + c.op);
  for (const auto& schema : OpRegistry::global().all()) {
    EXPECT_TRUE(covered.count(schema->domain + "::" + schema->name))
        << schema->qualified_name() << " has no conformance case";
  }
}

TEST(ConformanceCoverage, CaseNamesAreUnique) {
  std::set<std::string> seen;
  for (const OpCase& c : all_op_cases()) {
    EXPECT_TRUE(seen.insert(c.op + "/" + c.name).second)
        << "duplicate case " << c.op << "/" << c.name;
  }
}

}  // namespace
}  // namespace seqrt

// Prints each backend's tally. Exits 77 (ctest: skipped) when no case met a
// device, every one a no-device skip, so an absent backend never reads as
// passed.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int result = RUN_ALL_TESTS();
  seqrt::open_backends().clear();
  int met_device = 0, no_device = 0;
  for (const auto& [backend, t] : seqrt::tallies()) {
    fmt::print(
        "conformance on {}: {} matched, {} refused at a lowered limit, {} "
        "skipped as listed unsupported, {} skipped for no device, {} failed\n",
        backend, t.matched, t.refused_at_limit, t.listed, t.no_device,
        t.failed);
    met_device += t.matched + t.refused_at_limit + t.listed + t.failed;
    no_device += t.no_device;
  }
  if (result == 0 && met_device == 0 && no_device > 0) return 77;
  return result;
}
