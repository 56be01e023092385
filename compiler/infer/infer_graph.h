// Type checking of a whole graph against the op schemas: every node's
// attributes, arity and inferred output types, merged into the graph's
// declared value types (a conflict is an error naming the node).
#pragma once

#include <map>

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

// The same, and also returns the small values inference computed without
// the data: node outputs of the top graph (not subgraphs) that are
// functions of the constants and of the values' shapes, such as the shape
// arithmetic of an export (Shape -> Gather -> Concat) once the input dims
// are fixed. Keyed by value; constants of the graph are not repeated.
Result<std::map<ValueId, Tensor>> infer_graph_values(
    Graph& graph, const OpRegistry& registry = OpRegistry::global());

// Checks that every node's op is registered and its node matches the
// schema (arity, attribute types) without inferring types; recursive into
// subgraphs.
Status check_ops(const Graph& graph,
                 const OpRegistry& registry = OpRegistry::global());

}  // namespace seqrt
