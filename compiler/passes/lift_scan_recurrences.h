// What lift_scan_recurrences' recognisers share (one file per recurrence:
// lift_selective_scan.cc, lift_retention.cc, lift_rnn_cells.cc; the pass, the
// checks and the rewrite in lift_scan_recurrences.cc). Internal to
// compiler/passes.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/passes/recurrence_factors.h"
#include "compiler/passes/rewrite.h"
#include "graph/graph.h"

namespace seqrt {

// A Scan over axis 0 of every scan input, forward, stacking its scan
// outputs along axis 0 forward, every input given (the pass checks these
// before asking the recognisers).
struct ScanSite {
  const Graph& outer;  // the graph holding the Scan
  const Node& scan;
  const Graph& body;
  size_t num_states = 0;
  // Sizes that stand in for the symbolic dims (a batch of "batch"): the
  // recognisers read `body` with these in place, and the check runs at
  // them. The lifts they write hold no size of a symbolic dim.
  std::map<std::string, int64_t> probe;
};

// How the check fills a Scan input with random values.
enum class InputFill {
  kNormal,  // N(0, 1)
  kStep,    // uniform in [0.01, 0.5]: a step size Δ, so exp(Δ·A) stays sane
};

// A recognised recurrence and how to write it with sequence ops.
struct ScanLift {
  std::string op;                // "seqrt::SelectiveScan", for the pass's notes
  std::string summary;           // "D 64, N 8"
  std::vector<InputFill> fills;  // one per Scan input
  // Appends to `add` the nodes replacing the Scan, built in `graph`: they
  // read `inputs` (the Scan's inputs there) and write `outputs` (its
  // outputs; kNoValue where unused).
  std::function<void(Graph& graph, const std::vector<ValueId>& inputs,
                     const std::vector<ValueId>& outputs,
                     std::vector<Node>& add)>
      build;
};

std::optional<ScanLift> recognise_selective_scan(const ScanSite& site);
std::optional<ScanLift> recognise_linear_attention(const ScanSite& site);
std::optional<ScanLift> recognise_retention(const ScanSite& site);
// One LSTM / GRU cell step (lift_rnn_cells.cc) -> ONNX LSTM / GRU.
std::optional<ScanLift> recognise_lstm(const ScanSite& site);
std::optional<ScanLift> recognise_gru(const ScanSite& site);

// The value of a body constant, or of a capture the outer graph holds as a
// constant; nullptr for anything computed.
const Tensor* body_constant(const ScanSite& site, ValueId id);

// Index of `id` among the body's scan inputs (its body input index, after
// the states), or -1.
int scan_input_index(const ScanSite& site, ValueId id);

// The index i of the factor for which `is_first(fs[i])` holds while the
// other (of two) passes `is_second`, or -1.
int pick_pair(const std::vector<Factor>& fs,
              const std::function<bool(const Factor&)>& is_first,
              const std::function<bool(const Factor&)>& is_second);

// The one axis a ReduceSum reduces (its axes input or attribute), as
// written; nullopt for none or several.
std::optional<int64_t> reduced_axis(const ProductReader& r, const Node& sum);

// A per-head matrix state S (Bt,H,dk,dv) (no Bt when batch is 0), as the
// retention and linear-attention recognisers read it.
struct MatrixState {
  int64_t batch = 0, heads = 0, dk = 0, dv = 0;
};

// The read-out o_t = q_t·S' per head (body output 1, (Bt,H,dv), of the new
// state body output 0): MatMul(q_t[…,None,:], S') or ReduceSum(q_t[…,None]
// · S', dk axis). The scan input index of q, or -1.
int match_matrix_readout(const ScanSite& site, const ProductReader& r,
                         const MatrixState& state);

// The state update every recogniser starts from: a Scan with one state
// and two outputs (the new state, one scan output) over `inputs` body
// inputs, the state of rank in [min_rank, max_rank], the new state an Add
// (through views) of two terms. Its state dims and the Add, or nullopt.
struct StateUpdate {
  std::vector<int64_t> state;
  const Node* add = nullptr;
};
std::optional<StateUpdate> match_state_update(const ScanSite& site,
                                              const ProductReader& r,
                                              size_t inputs, size_t min_rank,
                                              size_t max_rank);

// Builders for the replacement nodes; each returns the new output value.
ValueId add_ints_constant(Graph& graph, const std::string& base,
                          const std::vector<int64_t>& values);
ValueId add_op(Graph& graph, std::vector<Node>& add, const std::string& op,
               std::vector<ValueId> inputs, AttrMap attrs,
               const std::string& name, ValueId output = kNoValue);
// `x` transposed by `perm` (the time axis moved where the op wants it),
// then with axes of size 1 inserted at `unsqueeze` (the op's batch or
// groups) when not empty.
ValueId move_time(Graph& graph, std::vector<Node>& add, ValueId x,
                  std::vector<int64_t> perm,
                  const std::vector<int64_t>& unsqueeze,
                  const std::string& name);
// The reverse, into `output`: axis 0 squeezed when `squeeze`, then the
// Transpose by `perm` when it is not empty (an Identity when neither).
void restore_layout(Graph& graph, std::vector<Node>& add, ValueId x,
                    bool squeeze, const std::vector<int64_t>& perm,
                    ValueId output, const std::string& name);

// Where a recogniser's axes go when the body has a leading batch axis:
// each placement moves one axis on and the batch axis comes first.
std::vector<int> with_batch_axis(bool batched, std::vector<int> placement);
std::vector<int64_t> with_batch_dim(int64_t batch, std::vector<int64_t> dims);

}  // namespace seqrt
