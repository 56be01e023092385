// What an op's inference function and reference kernel see of a node.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "graph/dim_expr.h"
#include "graph/graph.h"
#include "ops/node_state.h"

namespace seqrt {

struct OpSchema;

// Typed attribute access with the schema's defaults, and error messages
// prefixed with the node's label: "[Softmax] node 'sm': axis 5 out of range".
class OpContext {
 public:
  OpContext(const Node& node, const OpSchema& schema)
      : node_(node), schema_(schema) {}

  const Node& node() const { return node_; }
  const OpSchema& schema() const { return schema_; }

  bool has_attr(const std::string& name) const;  // set, or has a default
  int64_t attr_int(const std::string& name) const;
  float attr_float(const std::string& name) const;
  const std::string& attr_string(const std::string& name) const;
  const std::vector<int64_t>& attr_ints(const std::string& name) const;
  const std::vector<float>& attr_floats(const std::string& name) const;
  const std::vector<std::string>& attr_strings(const std::string& name) const;
  const Tensor& attr_tensor(const std::string& name) const;
  const std::shared_ptr<Graph>& attr_graph(const std::string& name) const;

  template <typename... Args>
  Status error(fmt::format_string<Args...> format, Args&&... args) const {
    return Status(StatusCode::kInvalidArgument,
                  node_.label() + ": " +
                      fmt::format(format, std::forward<Args>(args)...));
  }
  template <typename... Args>
  Status unsupported_error(fmt::format_string<Args...> format,
                           Args&&... args) const {
    return Status(StatusCode::kUnsupported,
                  node_.label() + ": " +
                      fmt::format(format, std::forward<Args>(args)...));
  }

 private:
  // The node's attribute or the schema default; asserts the schema knows it.
  const Attribute& attr(const std::string& name) const;

  const Node& node_;
  const OpSchema& schema_;
};

// Static type of one input as known at inference time.
struct ValueInfo {
  DType dtype = DType::kUndefined;
  std::optional<Shape> shape;     // nullopt: rank unknown
  const Tensor* value = nullptr;  // set when the input is a known constant
  // The elements of a small rank-0/1 integer tensor known only
  // symbolically (Shape of a (batch,seq) input is [batch, seq]); nullopt
  // when not tracked. See InferContext::input_symbolic.
  std::optional<std::vector<DimExpr>> symbolic;
};

// Largest integer tensor tracked element by element at inference.
inline constexpr int64_t kMaxSymbolicElements = 64;

class InferContext : public OpContext {
 public:
  InferContext(const Node& node, const OpSchema& schema,
               std::vector<ValueInfo> inputs)
      : OpContext(node, schema),
        inputs_(std::move(inputs)),
        outputs_(node.outputs.size()) {}

  size_t num_inputs() const { return inputs_.size(); }
  bool has_input(size_t i) const {
    return i < inputs_.size() && inputs_[i].dtype != DType::kUndefined;
  }
  const ValueInfo& input(size_t i) const { return inputs_[i]; }
  DType input_dtype(size_t i) const { return inputs_[i].dtype; }
  const std::optional<Shape>& input_shape(size_t i) const {
    return inputs_[i].shape;
  }
  const Tensor* input_value(size_t i) const { return inputs_[i].value; }
  // The elements of input i when it is a rank-0/1 integer tensor of at
  // most kMaxSymbolicElements elements known as constants or symbolically
  // (each element a DimExpr, possibly unknown); nullopt otherwise.
  std::optional<std::vector<DimExpr>> input_symbolic(size_t i) const;

  size_t num_outputs() const { return outputs_.size(); }
  void set_output(size_t i, DType dtype, std::optional<Shape> shape) {
    outputs_[i] = ValueInfo{dtype, std::move(shape), nullptr};
  }
  // Records the value of output i when inference can tell it without the
  // data (Shape of a fixed-shape input), so later nodes see it as constant.
  void set_output_value(size_t i, Tensor value) {
    output_values_.resize(outputs_.size());
    output_values_[i] = std::move(value);
  }
  // Records the elements of integer output i symbolically (shape
  // arithmetic on symbolic dims); inference turns all-constant ones into a
  // known value.
  void set_output_symbolic(size_t i, std::vector<DimExpr> elements) {
    output_symbolic_.resize(outputs_.size());
    output_symbolic_[i] = std::move(elements);
  }
  const std::vector<ValueInfo>& outputs() const { return outputs_; }
  // Empty tensors where no value is known.
  const std::vector<Tensor>& output_values() const { return output_values_; }
  // Nullopt (or a shorter vector) where nothing symbolic is known.
  const std::vector<std::optional<std::vector<DimExpr>>>& output_symbolic()
      const {
    return output_symbolic_;
  }

 private:
  std::vector<ValueInfo> inputs_;
  std::vector<ValueInfo> outputs_;
  std::vector<Tensor> output_values_;
  std::vector<std::optional<std::vector<DimExpr>>> output_symbolic_;
};

// Runs a subgraph (If branches, Scan/RungeKutta bodies) for reference
// kernels; the executor provides it. `inputs` follow the subgraph's inputs;
// captures are resolved from the enclosing scope by the executor.
using SubgraphRunner = std::function<Result<std::vector<Tensor>>(
    const Graph& body, const std::vector<Tensor>& inputs)>;

// Storage the caller of a prepared subgraph offers for one of the body's
// values (by id) of the given dtype and dims; an empty tensor: the heap.
using ValuePlacer = std::function<Tensor(ValueId value, DType dtype,
                                         const std::vector<int64_t>& dims)>;

// The values of the graphs around a node, by name: what the captures of
// its subgraphs read.
using SubgraphScope = std::map<std::string, Tensor>;

// A subgraph made ready once for many runs (a Loop or Scan body run every
// iteration, and every run of the node where a NodeStateCache keeps it):
// its schedule, op schemas and kernels are fixed, so a run only executes
// the kernels. It holds nothing of the run that prepared it, and stays
// valid while the graph holding the body lives.
class PreparedSubgraph {
 public:
  virtual ~PreparedSubgraph() = default;
  // Runs the body on `inputs` (in body-input order), its captures read
  // from `scope`; node outputs go where `place` puts them when it is set
  // and gives storage.
  virtual Result<std::vector<Tensor>> run(std::vector<Tensor> inputs,
                                          const SubgraphScope& scope,
                                          const ValuePlacer* place) const = 0;
};
// Prepares `body` for repeated runs; the executor provides it where it can.
using SubgraphPreparer =
    std::function<Result<std::unique_ptr<PreparedSubgraph>>(const Graph& body)>;

// Where the executor wants output i of a node to live for the given dtype
// and dims: a zero-filled block of the run's planned arena, or, for an
// elementwise op planned in place, the block of the dying input it
// overwrites. An empty tensor: allocate on the heap.
using OutputPlacer = std::function<Tensor(size_t i, DType dtype,
                                          const std::vector<int64_t>& dims)>;
// Checks output i's dtype and dims against the run's limits before it is
// allocated (graph/run_control.h); the executor sets it.
using AllocationCheck = std::function<Status(size_t i, DType dtype,
                                             const std::vector<int64_t>& dims)>;

class KernelContext : public OpContext {
 public:
  KernelContext(const Node& node, const OpSchema& schema,
                std::vector<const Tensor*> inputs,
                SubgraphRunner run_subgraph = nullptr)
      : OpContext(node, schema),
        inputs_(std::move(inputs)),
        outputs_(node.outputs.size()),
        run_subgraph_(std::move(run_subgraph)) {}

  size_t num_inputs() const { return inputs_.size(); }
  // Null when the optional input is omitted.
  const Tensor* input(size_t i) const {
    return i < inputs_.size() ? inputs_[i] : nullptr;
  }
  bool has_input(size_t i) const { return input(i) != nullptr; }
  // Input i handed over to be written into and returned as an output, when
  // the executor can give it up: this node is its last reader and no other
  // handle shares its storage (Tensor::is_sole_owner). Otherwise nullopt,
  // and the kernel must copy. After a take, input(i) is an empty tensor.
  std::optional<Tensor> take_input(size_t i);
  // Set by the executor: for each input, its slot when it may be taken.
  void set_donations(std::vector<Tensor*> slots) {
    donations_ = std::move(slots);
  }

  size_t num_outputs() const { return outputs_.size(); }
  void set_output_placer(OutputPlacer placer) { placer_ = std::move(placer); }
  void set_allocation_check(AllocationCheck check) {
    check_ = std::move(check);
  }
  // Allocates output i and returns it for writing: zero-filled, or, when
  // the plan lets an elementwise op write in place, holding the input it
  // replaces (such kernels write every element). A size above the run's
  // limits fails first, naming the node.
  Result<Tensor*> allocate_output(size_t i, DType dtype,
                                  std::vector<int64_t> dims);
  void set_output(size_t i, Tensor tensor) { outputs_[i] = std::move(tensor); }
  std::vector<Tensor>& outputs() { return outputs_; }

  const SubgraphRunner& run_subgraph() const { return run_subgraph_; }
  // Set by executors that compile loop bodies once (the CPU backend); null
  // otherwise, and control-flow kernels then run the body per iteration.
  // `scope` gives the values a prepared body's captures read in this run.
  void set_subgraph_preparer(SubgraphPreparer preparer,
                             std::function<const SubgraphScope&()> scope) {
    preparer_ = std::move(preparer);
    scope_ = std::move(scope);
  }
  const SubgraphPreparer& prepare_subgraph() const { return preparer_; }
  // This run's scope; only where a preparer is set.
  const SubgraphScope& subgraph_scope() const { return scope_(); }
  // Where the executor keeps state of this node between its runs
  // (node_state.h); null where it keeps none.
  void set_node_state(NodeStateCache* cache) { node_state_ = cache; }
  NodeStateCache* node_state() const { return node_state_; }

 private:
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor*> donations_;
  OutputPlacer placer_;
  AllocationCheck check_;
  std::vector<Tensor> outputs_;
  SubgraphRunner run_subgraph_;
  SubgraphPreparer preparer_;
  std::function<const SubgraphScope&()> scope_;
  NodeStateCache* node_state_ = nullptr;
};

}  // namespace seqrt
