// Inference on the values of small integer tensors known symbolically
// (ONNX calls it data propagation): Shape of a (batch,seq) input is
// [batch, seq], Gather/Slice/Concat/arithmetic carry such elements along,
// and Reshape, Expand, ConstantOfShape, Range and Slice read them back as
// dims. Elements are DimExprs (graph/dim_expr.h); see
// InferContext::input_symbolic and set_output_symbolic.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "graph/dim_expr.h"
#include "ops/op_context.h"

namespace seqrt {

// Output 0 gets input 0's elements unchanged when output 0 has rank <= 1
// (Identity, Cast between integers, Squeeze/Unsqueeze of such a tensor).
void forward_symbolic(InferContext& ctx);

// Elementwise Add, Sub, Mul, Div, Max or Min (`op`) of symbolic integer
// inputs of rank <= 1, with broadcasting of single elements.
void fold_symbolic(InferContext& ctx, const std::string& op);

// Equal of symbolic integer inputs of rank <= 1: when every element pair
// is decided (equal expressions, a constant difference, or a dim against a
// negative constant as in Where(Equal(shape, -1), 1, shape)), output 0
// becomes a known bool value.
void equal_symbolic(InferContext& ctx);

// Where with a known bool condition over symbolic integer inputs of rank
// <= 1 picks the elements.
void where_symbolic(InferContext& ctx);

// Input i read as a shape (Reshape, Expand, ConstantOfShape): one Dim per
// element, nullopt when its length is not known. Elements that are
// negative constants come back as unknown Dims; use input_symbolic for
// Reshape's -1.
std::optional<std::vector<Dim>> symbolic_shape_input(const InferContext& ctx,
                                                     size_t i);

// The single element of scalar (or one-element) input i, or unknown.
DimExpr symbolic_scalar_input(const InferContext& ctx, size_t i);

}  // namespace seqrt
