// The one list of ops. Registration is explicit (ops/op_list.def), not by
// static initialisers, so linkers cannot drop ops from static libraries.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ops/op_schema.h"

namespace seqrt {

class OpRegistry {
 public:
  // Every op of ops/op_list.def; built on first use, then immutable.
  static const OpRegistry& global();

  // Fails if (domain, name) is already registered or the schema is
  // incomplete (no infer or reference function).
  Status add(OpSchema schema);
  const OpSchema* find(std::string_view domain, std::string_view name) const;
  const std::vector<std::unique_ptr<OpSchema>>& all() const { return ops_; }

 private:
  std::vector<std::unique_ptr<OpSchema>> ops_;
};

// Adds a schema; a duplicate or incomplete schema is a bug and aborts.
void register_or_die(OpRegistry& registry, OpSchema schema);

// Each op family's file defines its register function; op_list.def names
// them all.
#define SEQRT_OP_FAMILY(fn) void fn(OpRegistry& registry);
#include "ops/op_list.def"
#undef SEQRT_OP_FAMILY

}  // namespace seqrt
