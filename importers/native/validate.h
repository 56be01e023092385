// Validation of untrusted .seqrt bytes, in the order the reader runs it:
// header sanity, the FlatBuffers verifier, the segment table and each
// tensor's byte range (during conversion, see deserialize.h), and finally
// the graph-level checks. Errors here carry no file name; the reader adds
// it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "importers/native/format.h"
#include "ops/registry.h"
#include "schema/seqrt_generated.h"

namespace seqrt {

// Checks magic, version, and that the FlatBuffer and the segment area lie
// inside the `size` bytes at `data` (computed without overflow).
Result<SeqrtHeader> validate_header(const uint8_t* data, size_t size);

// Runs the FlatBuffers verifier (identifier "SQRT", bounded nesting and
// table count) over the FlatBuffer.
Status verify_flatbuffer(const uint8_t* data, size_t size);

// The model's segments, checked against the segment area; resolves each
// tensor reference to the bytes it names.
class SegmentTable {
 public:
  // `area` is the start of the segment area, `area_size` its length.
  static Result<SegmentTable> create(
      const flatbuffers::Vector<const fb::Segment*>* segments,
      const uint8_t* area, uint64_t area_size);

  // The bytes of a tensor of `dtype` and `dims` (both already checked)
  // described by `ref`; `what` names the tensor in errors
  // ("constant 'w'").
  Result<const uint8_t*> locate(const fb::Tensor& ref, DType dtype,
                                const std::vector<int64_t>& dims,
                                const std::string& what) const;

 private:
  struct Range {
    uint64_t offset;
    uint64_t size;
  };
  std::vector<Range> ranges_;
  const uint8_t* area_ = nullptr;
};

// verify_graph() (structure, cycles, subgraph depth) and, when `registry`
// is not null, check_ops() (ops known, arity and attribute types).
Status validate_graph(const Graph& graph, const OpRegistry* registry);

}  // namespace seqrt
