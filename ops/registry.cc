#include "ops/registry.h"

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace seqrt {

Status OpRegistry::add(OpSchema schema) {
  if (find(schema.domain, schema.name) != nullptr) {
    return internal_error("op {} registered twice", schema.qualified_name());
  }
  if (!schema.infer || !schema.reference) {
    return internal_error("op {} lacks an inference or reference function",
                          schema.qualified_name());
  }
  ops_.push_back(std::make_unique<OpSchema>(std::move(schema)));
  return Status::ok();
}

const OpSchema* OpRegistry::find(std::string_view domain,
                                 std::string_view name) const {
  for (const auto& op : ops_) {
    if (op->domain == domain && op->name == name) return op.get();
  }
  return nullptr;
}

const OpRegistry& OpRegistry::global() {
  // Never destroyed (ops outlive every static); held by a unique_ptr while
  // it is built, so that an allocation failure there leaks nothing.
  static const OpRegistry* registry = [] {
    auto built = std::make_unique<OpRegistry>();
#define SEQRT_OP_FAMILY(fn) fn(*built);
#include "ops/op_list.def"
#undef SEQRT_OP_FAMILY
    return built.release();
  }();
  return *registry;
}

// A registration failure is a bug in an op definition, found by every test.
void register_or_die(OpRegistry& registry, OpSchema schema) {
  Status status = registry.add(std::move(schema));
  if (!status.is_ok()) {
    std::fprintf(stderr, "seqrt: %s\n", status.to_string().c_str());
    std::abort();
  }
}

}  // namespace seqrt
