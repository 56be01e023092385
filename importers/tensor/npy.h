// NumPy .npy files: the tensor format of `seqrt run --input` and
// `--output-dir`, and of test data.
//
// Reads format versions 1.0, 2.0 and 3.0 with the dtypes seqrt has:
// '<f4' '<f2' '<f8' '|i1' '|u1' '<i4' '<i8' '|b1' (and their big-endian
// '>' forms, converted to little-endian on load). Fortran-ordered arrays are
// transposed into C order on load. Files are untrusted input: the header is
// parsed strictly and every size is checked, so a bad file gives an error
// naming it, never a crash.
//
// Writes version 1.0 (2.0 when the header does not fit), C order,
// little-endian. npy has no bfloat16 code, so a bf16 tensor is written as
// '<f4' (every bf16 value is exactly representable in f32) and reads back
// as f32. Likewise for the types NumPy lacks: i4/u4 are written unpacked as
// '|i1'/'|u1' and the float8s as '<f4' values (exact); from_npy_compatible
// turns such arrays back into the dtype a model input wants.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"
#include "graph/tensor.h"

namespace seqrt {

// A header larger than this is refused (NumPy itself refuses headers past
// 10000 bytes unless told otherwise).
inline constexpr size_t kMaxNpyHeaderBytes = 64 * 1024;
// Arrays of more dims than this are refused.
inline constexpr size_t kMaxNpyRank = 32;

Result<Tensor> read_npy_file(const std::string& path);
// `name_for_errors` names the data in error messages (a path, a test name).
// The returned tensor owns a copy of the data.
Result<Tensor> read_npy_buffer(const uint8_t* data, size_t size,
                               const std::string& name_for_errors);

Status write_npy_file(const Tensor& tensor, const std::string& path);

// The tensor as .npy can hold it: i4/u4 widened to i8/u8, a float8 or
// f4e2m1 to f32 (exact); other tensors unchanged.
Result<Tensor> npy_compatible(const Tensor& tensor);
// The reverse, for a model input of dtype `wanted`: an i8 array becomes
// i4 (values must lie in -8..7), a u8 array u4 (0..15), an f32 array a
// float8 or f4e2m1 (as Tensor::set_element_f64 converts: rounded to nearest
// even and saturating, f8e8m0 rounded up to a power of two). Other dtypes, and
// a tensor already of `wanted`, are returned unchanged.
Result<Tensor> from_npy_compatible(const Tensor& tensor, DType wanted,
                                   const std::string& name_for_errors);
// from_npy_compatible for every feed that names an input of `graph`, so
// `seqrt run --input` and Python's Session.run take i4/u4/f4e2m1/float8 inputs
// as i8/u8/f32 arrays.
Status feeds_from_npy_compatible(const Graph& graph,
                                 std::map<std::string, Tensor>& feeds);
// The bytes write_npy_file writes.
Result<std::vector<uint8_t>> write_npy_buffer(const Tensor& tensor);

}  // namespace seqrt
