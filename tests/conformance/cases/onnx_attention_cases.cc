#include "tests/conformance/op_case.h"

namespace seqrt {

void add_onnx_attention_cases(std::vector<OpCase>& cases) { (void)cases; }

}  // namespace seqrt
