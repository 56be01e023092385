#include "backends/cuda/rnn_plan.h"

#include <algorithm>

#include "ops/rnn/rnn_common.h"

namespace seqrt::cuda {
namespace {

int64_t capped_blocks(int64_t work, int64_t per_block) {
  if (work <= 0) return 0;
  return std::min(kMaxRnnBlocks, (work + per_block - 1) / per_block);
}

}  // namespace

RnnCell rnn_cell_from_config(const RnnConfig& config) {
  RnnCell cell;
  cell.kind = config.kind == RnnKind::kLstm  ? RnnCellKind::kLstm
              : config.kind == RnnKind::kGru ? RnnCellKind::kGru
                                             : RnnCellKind::kRnn;
  cell.gates = static_cast<int>(config.gates);
  cell.directions = static_cast<int>(config.directions);
  cell.reverse = config.reverse;
  cell.layout = static_cast<int>(config.layout);
  cell.has_clip = config.has_clip;
  cell.clip = config.clip;
  cell.input_forget = config.input_forget;
  cell.linear_before_reset = config.linear_before_reset;
  for (int64_t dir = 0; dir < config.directions; ++dir) {
    for (int64_t slot = 0; slot < config.slots() && slot < 3; ++slot) {
      const RnnActivation& act = config.act(dir, slot);
      cell.act[dir][slot] = RnnAct{act.fn, act.alpha, act.beta};
    }
  }
  return cell;
}

RnnScratch plan_rnn_scratch(const RnnCell& cell, int64_t seq, int64_t batch,
                            int64_t hidden) {
  const int64_t state = cell.directions * batch * hidden;
  const bool gru_phases = rnn_phases(cell) == 2;
  RnnScratch s;
  int64_t next = 0;
  // Each piece starts on a 256-byte boundary, as the arena's blocks do.
  auto take = [&next](int64_t floats) {
    const int64_t at = next;
    next += (floats + 63) / 64 * 64;
    return at;
  };
  s.lens = take(2 * batch);  // int64, two floats each
  s.xw = take(cell.directions * seq * batch * cell.gates * hidden);
  s.h0 = take(state);
  s.h1 = take(state);
  s.c = take(cell.kind == RnnCellKind::kLstm ? state : 0);
  s.z = take(gru_phases ? state : 0);
  s.rh = take(gru_phases ? state : 0);
  s.total = next;
  return s;
}

int64_t rnn_warp_blocks(int64_t units, int threads) {
  return capped_blocks(units, threads / 32);
}

int64_t rnn_element_blocks(int64_t elements, int threads) {
  return capped_blocks(elements, threads);
}

}  // namespace seqrt::cuda
