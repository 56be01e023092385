// The passes of the default pipeline, one file each (see README.md).
#pragma once

#include "compiler/passes/pass.h"

namespace seqrt {

// Types every value with infer_graph (symbolic dims included); changed when
// any value's dtype or shape got more specific.
Pass infer_shapes_pass();
// Fills in the dims of Reshape, Expand and ConstantOfShape outputs whose
// shapes are computed at run time from Shape/Gather/Concat arithmetic, as
// symbolic dims, and carries them on through each node's inference.
Pass infer_symbolic_shapes_pass();
// Runs nodes whose inputs are all constants with their reference kernels,
// and takes the values inference can tell without data (Shape of a fixed
// shape); the outputs become constants. Outputs above kMaxFoldedBytes stay.
Pass fold_constants_pass();
// Removes nodes whose outputs reach no graph output (state outputs are
// graph outputs) and constants nothing reads; graph inputs stay.
Pass eliminate_dead_code_pass();
// Shape(x) of a computed x whose dims inference knows from the graph
// inputs' dims (such as past+seq) -> the same dims read from
// the graph inputs, so that such a read no longer pins x (and the nodes a
// fusion would replace). Runs between two fuse_attention passes: the
// causal-mask match reads Q's and K's shapes as exported.
Pass rebase_shape_reads_pass();
// MatMul-(scale)-(mask)-Softmax-MatMul -> seqrt::Attention, with the scale
// on Q/K, GQA repeat_kv and KV-cache Concat variants.
Pass fuse_attention_pass();
// A loop the tracer wrote out (T copies of one step reading slice t of
// some tensors through Gathers, carrying values into the next copy and
// stacked by a Concat) -> one Scan over those tensors, with the
// elementwise work on whole sequences that only the loop reads moved into
// its body (so that lift_scan_recurrences can lift it).
Pass fold_unrolled_loops_pass();
// Loop -> Scan where the Loop always runs its trip count and reads each
// iteration's slice of outer tensors only as Gather(X, iteration, axis 0),
// so that lift_scan_recurrences sees recurrences written as Loops.
Pass loop_to_scan_pass();
// Scan loops whose body is a selective (diagonal) SSM scan or a retention
// state update -> seqrt::SelectiveScan / seqrt::Retention with the layout
// ops around them, each lift checked on random inputs against the Scan
// with the reference kernels (kept only within 1e-4 relative).
Pass lift_scan_recurrences_pass();
// ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div(/Mul/Add) -> LayerNormalization.
Pass fuse_layer_norm_pass();
// Pow/ReduceMean/Add/Sqrt/Div (or Reciprocal/Mul)/Mul -> RMSNormalization.
Pass fuse_rms_norm_pass();
// x*0.5*(1+Erf(x/sqrt2)) and the tanh form -> Gelu.
Pass fuse_gelu_pass();
// LinearAttention (gated) with one constant decay per head -> seqrt::Retention
// with the packed inputs viewed as heads.
Pass fuse_retention_pass();
// MatMul(X, DequantizeLinear(constant int8/uint8/int4/uint4 W, scale,
// zero point)) with per-tensor, per-output-channel or block-wise (along K)
// scales -> one weight-only quantized seqrt::Linear; runs before
// fold_constants, which would make the f32 weight.
Pass fuse_dequantize_linear_pass();
// MatMul with a constant 2-D W, + a constant (N) bias, + Relu/Gelu/Sigmoid/
// SiLU -> seqrt::Linear (any rank of X).
Pass fuse_linear_pass();
// Two or more MatMul(X, constant 2-D W_i) or seqrt::Linear(X, W_i, B_i?)
// (a MatMul being a Linear without bias or activation) with one activation,
// reading the same X -> one node over the weights concatenated along N and a
// Split of its last axis (Llama's q/k/v).
Pass fuse_sibling_linears_pass();
// A 2-D MatMul followed by Add(bias) -> Gemm.
Pass fuse_gemm_pass();
// Connected f32 elementwise nodes (two or more, one output, intermediates
// read nowhere else) -> seqrt::FusedElementwise with the chain as its body.
Pass fuse_elementwise_pass();

inline constexpr size_t kMaxFoldedBytes = size_t{64} << 20;

}  // namespace seqrt
