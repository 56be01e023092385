// Runs every op case on every compiled backend and compares with the op's
// reference kernel called directly. A new backend is covered by adding it
// to runtime/backend_registry.cc; a new op by adding its cases.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "backends/reference/reference_backend.h"
#include "graph/builder.h"
#include "ops/infer_graph.h"
#include "ops/registry.h"
#include "runtime/backend_registry.h"
#include "tests/conformance/op_case.h"

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

Result<std::vector<Tensor>> run_on_backend(const std::string& backend_name,
                                           const OpCase& c) {
  SEQRT_ASSIGN_OR_RETURN(BuiltCase built, build_case(c));
  SEQRT_ASSIGN_OR_RETURN(auto backend, create_backend(backend_name));
  SEQRT_ASSIGN_OR_RETURN(auto executable,
                         backend->compile(built.graph, CompileOptions{}));
  return executable->run(built.graph_inputs);
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

// Skips (with the reason) a case whose node the backend does not support;
// the backend's unsupported list is what it declares, not a failure.
Status backend_supports(const std::string& backend_name, const OpCase& c) {
  SEQRT_ASSIGN_OR_RETURN(BuiltCase built, build_case(c));
  SEQRT_ASSIGN_OR_RETURN(auto backend, create_backend(backend_name));
  return backend->supports(built.graph, built.graph.nodes.front());
}

// Cases a backend is known to get wrong, "backend:op/case" -> the reason;
// each is an open bug of that backend, listed so that it stays visible.
const std::map<std::string, std::string>& known_failures() {
  // Empty: no backend has a known wrong case today.
  static const std::map<std::string, std::string> list = {};
  return list;
}

TEST_P(Conformance, MatchesReference) {
  const Param& p = GetParam();
  const OpCase& c = *p.op_case;
  auto known = known_failures().find(p.backend + ":" + c.op + "/" + c.name);
  if (known != known_failures().end()) {
    GTEST_SKIP() << "known failure: " << known->second;
  }
  if (p.backend != "reference") {
    Status supported = backend_supports(p.backend, c);
    if (supported.code() == StatusCode::kUnsupported) {
      GTEST_SKIP() << supported.message();
    }
  }
  Result<std::vector<Tensor>> want = run_reference_kernel(c);
  Result<std::vector<Tensor>> got = run_on_backend(p.backend, c);
  if (c.expect_error) {
    EXPECT_FALSE(want.is_ok()) << "reference kernel accepted a bad case";
    EXPECT_FALSE(got.is_ok()) << p.backend << " accepted a bad case";
    if (!got.is_ok()) {
      EXPECT_FALSE(got.status().message().empty());
    }
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
