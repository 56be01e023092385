// Graphs and helpers shared by the native format's tests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "importers/native/read_options.h"
#include "ops/registry.h"

namespace seqrt {
namespace testing_models {

// The test op "seqrt_test::AllAttrs": any number of optional inputs and
// outputs, and one attribute of every type, named after the type ("int",
// "float", "string", "ints", "floats", "strings", "tensor", "graph").
const OpRegistry& test_registry();

// Read options that check ops against test_registry().
SeqrtReadOptions test_read_options();

// A graph using every feature of the format: every attribute type, every
// dtype (constants and values), fixed, symbolic and unknown dims, unknown
// ranks, empty and scalar tensors, subgraphs two levels deep with captures,
// omitted inputs and outputs, state pairs with and without an initial
// value, metadata (with a NUL byte in a value). Verified.
Graph every_feature_graph();

// A small graph with one f32 constant of `elements` elements, filled with
// a pattern (for file-size and sampling tests).
Graph weights_graph(int64_t elements);

// A .seqrt image in 64-byte aligned memory, for reads that must not copy.
class AlignedImage {
 public:
  explicit AlignedImage(const std::vector<uint8_t>& bytes);
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }
  std::shared_ptr<const void> owner() const { return data_; }

 private:
  std::shared_ptr<uint8_t> data_;
  size_t size_;
};

// Reads `bytes` with test_read_options().
Result<Graph> read_test_image(const std::vector<uint8_t>& bytes);

// A path under the test temp dir, unique to this process.
std::string temp_path(const std::string& name);

}  // namespace testing_models
}  // namespace seqrt
