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
// as f32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

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
// The bytes write_npy_file writes.
Result<std::vector<uint8_t>> write_npy_buffer(const Tensor& tensor);

}  // namespace seqrt
