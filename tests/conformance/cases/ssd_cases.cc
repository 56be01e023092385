#include "tests/conformance/op_case.h"

namespace seqrt {

void add_ssd_cases(std::vector<OpCase>& cases) { (void)cases; }

}  // namespace seqrt
