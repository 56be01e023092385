#include "tests/conformance/op_case.h"

namespace seqrt {

void add_linear_attention_cases(std::vector<OpCase>& cases) { (void)cases; }

}  // namespace seqrt
