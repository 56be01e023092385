// Type checking of a whole graph against the op schemas: every node's
// attributes, arity and inferred output types, merged into the graph's
// declared value types (a conflict is an error naming the node).
#pragma once

#include "graph/graph.h"
#include "ops/registry.h"

namespace seqrt {

// Fills in value dtypes and shapes from the ops' inference functions.
// Subgraphs are typed first, before the node that holds them; a capture
// without a declared type takes the type of the enclosing value it names.
// Fails on an unknown op (listing every unknown op with its node) or on a
// declared type that contradicts the inferred one.
Status infer_graph(Graph& graph,
                   const OpRegistry& registry = OpRegistry::global());

// Checks that every node's op is registered and its node matches the
// schema (arity, attribute types) without inferring types; recursive into
// subgraphs.
Status check_ops(const Graph& graph,
                 const OpRegistry& registry = OpRegistry::global());

}  // namespace seqrt
