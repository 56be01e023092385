// Vectorised float loops shared by the CPU kernels. Each call dispatches at
// run time to the best instruction set the CPU has (Google Highway), so one
// binary runs on any x86-64 or ARM machine. Pointers need no alignment.
#pragma once

#include <cstddef>

namespace seqrt::cpu {

float dot(const float* a, const float* b, size_t n);
// y += alpha * x
void axpy(float alpha, const float* x, float* y, size_t n);
// x *= alpha
void scale(float alpha, float* x, size_t n);
float max_value(const float* x, size_t n);  // -inf for n == 0
// x = exp(x - shift); returns the sum of the new x (a softmax row).
float exp_shifted_sum(float* x, size_t n, float shift);
void exp_inplace(float* x, size_t n);
void sigmoid_inplace(float* x, size_t n);
void tanh_inplace(float* x, size_t n);
// x = x * sigmoid(x)
void silu_inplace(float* x, size_t n);

}  // namespace seqrt::cpu
