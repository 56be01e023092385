#version 450
// The few-row (M <= 8: decode) product of a weight-only quantized Linear,
// y = act(X W_real + bias) (quantized_linear_common.glsl). A workgroup
// makes 8 output columns, one per row of 32 invocations. W is output-
// channel major, so a column's codes are contiguous: invocation x of a
// column reads words x, x + 32, ... of it (neighbours read neighbouring
// words), unpacks the 8 (bits 4) or 4 (bits 8) codes in registers, and
// uses them for all ROWS rows of X. A word never straddles a block (blocks
// are at least 16 codes, words start at multiples of their code count), so
// the zero point is subtracted per code and the scale applied once per word.
// The 32 partial sums of each column and row are added in shared memory.
#include "common.glsl"
layout(local_size_x = 32, local_size_y = 8) in;
#include "quantized_linear_common.glsl"
layout(constant_id = 4) const uint ROWS = 1;  // M, at most MAX_ROWS
const uint MAX_ROWS = 8;

shared float partial[ROWS * 256];  // [row][column in group][x]

void main() {
  uint lane = gl_LocalInvocationID.x, yi = gl_LocalInvocationID.y;
  uint col = group_index() * 8u + yi;
  // Whole workgroups past the last column (the spread grid's tail) leave
  // before the barrier together.
  if (group_index() * 8u >= p.n) return;
  float dot[MAX_ROWS];
  for (uint r = 0; r < ROWS; ++r) dot[r] = 0.0;
  if (col < p.n) {
    uint full_words = p.k / CODES_PER_WORD;
    uint row_start = col * p.row_bytes;
    for (uint word = lane; word < full_words; word += 32u) {
      uint k0 = word * CODES_PER_WORD;
      uint codes = w_word_at(row_start + word * 4u);
      uint block = k0 >> p.block_shift;
      float zero = block_zero_point(col, block);
      float wv[8];
      for (uint j = 0; j < CODES_PER_WORD; ++j) {
        wv[j] = float(word_code(codes, j)) - zero;
      }
      float s = block_scale(col, block);
      for (uint r = 0; r < ROWS; ++r) {
        float sum = 0.0;
        uint xa = r * p.k + k0;
        for (uint j = 0; j < CODES_PER_WORD; ++j) sum += x[xa + j] * wv[j];
        dot[r] += s * sum;
      }
    }
    // The last K % CODES_PER_WORD codes, one per invocation.
    uint kk = full_words * CODES_PER_WORD + lane;
    if (kk < p.k) {
      uint block = kk >> p.block_shift;
      float wk = (float(w_code(col, kk)) - block_zero_point(col, block)) *
                 block_scale(col, block);
      for (uint r = 0; r < ROWS; ++r) dot[r] += x[r * p.k + kk] * wk;
    }
  }
  for (uint r = 0; r < ROWS; ++r) partial[r * 256u + yi * 32u + lane] = dot[r];
  barrier();
  if (col >= p.n || lane >= ROWS) return;
  // The first ROWS invocations of each column sum one row each.
  float sum = 0.0;
  for (uint i = 0; i < 32u; ++i) sum += partial[lane * 256u + yi * 32u + i];
  store_output(lane, col, sum);
}
