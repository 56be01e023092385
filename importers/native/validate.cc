#include "importers/native/validate.h"

#include <cstring>
#include <limits>

#include "compiler/infer/infer_graph.h"
#include "graph/verifier.h"
#include "importers/native/reader.h"

namespace seqrt {
namespace {

// Checks [offset, offset + size) against a region of `limit` bytes without
// computing offset + size (which may overflow on hostile input).
bool range_inside(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

Status check_version(const SeqrtHeader& header) {
  if (header.major == kSeqrtFormatMajor) return Status::ok();
  return invalid_model(
      "format version {}.{} is not supported: this reader reads version "
      "{}.x (it was written for {}.{}){}",
      header.major, header.minor, kSeqrtFormatMajor, kSeqrtFormatMajor,
      kSeqrtFormatMinor,
      header.major > kSeqrtFormatMajor ? "; the file needs a newer seqrt" : "");
}

Status check_flatbuffer_range(const SeqrtHeader& header, uint64_t size) {
  if (header.flatbuffer_offset < header.header_size) {
    return invalid_model(
        "the FlatBuffer at offset {} overlaps the {}-byte header",
        header.flatbuffer_offset, header.header_size);
  }
  // FlatBuffers addresses 8-byte fields relative to the buffer start.
  if (header.flatbuffer_offset % 8 != 0) {
    return invalid_model("the FlatBuffer offset {} is not a multiple of 8",
                         header.flatbuffer_offset);
  }
  if (header.flatbuffer_size >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    return invalid_model(
        "the FlatBuffer size {} exceeds the FlatBuffers limit of {} bytes",
        header.flatbuffer_size, FLATBUFFERS_MAX_BUFFER_SIZE - 1);
  }
  if (!range_inside(header.flatbuffer_offset, header.flatbuffer_size, size)) {
    return invalid_model(
        "the FlatBuffer needs bytes [{}, {}) but the file "
        "has only {} bytes (truncated?)",
        header.flatbuffer_offset,
        header.flatbuffer_offset + header.flatbuffer_size, size);
  }
  return Status::ok();
}

Status check_segment_area(const SeqrtHeader& header, uint64_t size) {
  if (header.segments_offset % kSeqrtSegmentAlignment != 0) {
    return invalid_model("the segment area offset {} is not a multiple of {}",
                         header.segments_offset, kSeqrtSegmentAlignment);
  }
  if (header.segments_offset <
      header.flatbuffer_offset + header.flatbuffer_size) {
    return invalid_model(
        "the segment area at offset {} overlaps the "
        "FlatBuffer, which ends at {}",
        header.segments_offset,
        header.flatbuffer_offset + header.flatbuffer_size);
  }
  if (!range_inside(header.segments_offset, header.segments_size, size)) {
    return invalid_model(
        "the segment area needs {} bytes from offset {} but "
        "the file has only {} bytes (truncated?)",
        header.segments_size, header.segments_offset, size);
  }
  return Status::ok();
}

}  // namespace

Result<SeqrtHeader> validate_header(const uint8_t* data, size_t size) {
  if (size < kSeqrtHeaderSize) {
    return invalid_model(
        "{} bytes is too small for a .seqrt file (the "
        "header alone is {} bytes)",
        size, kSeqrtHeaderSize);
  }
  if (!looks_like_seqrt(data, size)) {
    return invalid_model(
        "not a .seqrt file (it does not start with the \"SEQRT\" magic)");
  }
  SeqrtHeader header = decode_seqrt_header(data);
  SEQRT_RETURN_IF_ERROR(check_version(header));
  if (header.header_size < kSeqrtHeaderSize) {
    return invalid_model("the header size is {}, at least {} expected",
                         header.header_size, kSeqrtHeaderSize);
  }
  SEQRT_RETURN_IF_ERROR(check_flatbuffer_range(header, size));
  SEQRT_RETURN_IF_ERROR(check_segment_area(header, size));
  return header;
}

Status verify_flatbuffer(const uint8_t* data, size_t size) {
  if (size < 8 || !fb::ModelBufferHasIdentifier(data)) {
    return invalid_model("the FlatBuffer lacks the \"{}\" identifier",
                         fb::ModelIdentifier());
  }
  flatbuffers::Verifier::Options options;
  // Each subgraph level adds three tables (Graph, Node, Attribute); the
  // margin lets the converter report a too-deep nesting by name.
  options.max_depth = 3 * (kMaxSubgraphDepth + 2) + 8;
  // Every table takes at least 4 bytes, so no honest buffer has more; the
  // bound stops shared subtrees from making verification explode.
  options.max_tables = static_cast<flatbuffers::uoffset_t>(size / 4 + 16);
  flatbuffers::Verifier verifier(data, size, options);
  if (!fb::VerifyModelBuffer(verifier)) {
    return invalid_model(
        "the FlatBuffer is malformed: the FlatBuffers "
        "verifier rejected it (an offset or length out of "
        "range, misaligned data, or nesting deeper than {} tables)",
        options.max_depth);
  }
  return Status::ok();
}

Result<SegmentTable> SegmentTable::create(
    const flatbuffers::Vector<const fb::Segment*>* segments,
    const uint8_t* area, uint64_t area_size) {
  SegmentTable table;
  table.area_ = area;
  if (segments == nullptr) return table;
  // The verifier checks only 4-byte alignment of vector contents.
  if (segments->size() > 0 &&
      reinterpret_cast<uintptr_t>(segments->Data()) % 8 != 0) {
    return invalid_model("the segment table is misaligned");
  }
  table.ranges_.reserve(segments->size());
  for (flatbuffers::uoffset_t i = 0; i < segments->size(); ++i) {
    const fb::Segment* segment = segments->Get(i);
    Range range{segment->offset(), segment->size()};
    if (range.offset % kSeqrtSegmentAlignment != 0) {
      return invalid_model(
          "segment #{} starts at offset {} of the segment "
          "area, not a multiple of {}",
          i, range.offset, kSeqrtSegmentAlignment);
    }
    if (!range_inside(range.offset, range.size, area_size)) {
      return invalid_model(
          "segment #{} needs {} bytes from offset {} of the "
          "segment area, which holds only {} bytes",
          i, range.size, range.offset, area_size);
    }
    table.ranges_.push_back(range);
  }
  return table;
}

Result<const uint8_t*> SegmentTable::locate(const fb::Tensor& ref, DType dtype,
                                            const std::vector<int64_t>& dims,
                                            const std::string& what) const {
  SEQRT_ASSIGN_OR_RETURN(int64_t count, checked_num_elements(dims));
  // count <= 2^48 and elements are at most 8 bytes: no overflow.
  uint64_t needed = dtype_bytes(dtype, static_cast<size_t>(count));
  if (ref.size() != needed) {
    return invalid_model("{} ({}{}) needs {} bytes but the file gives it {}",
                         what, dtype_name(dtype), dims_to_string(dims), needed,
                         ref.size());
  }
  if (ref.segment() >= ranges_.size()) {
    return invalid_model(
        "{} refers to segment #{} but the file has {} segments", what,
        ref.segment(), ranges_.size());
  }
  if (ref.offset() % kSeqrtSegmentAlignment != 0) {
    return invalid_model(
        "{} starts at offset {} of segment #{}, not a multiple of {}", what,
        ref.offset(), ref.segment(), kSeqrtSegmentAlignment);
  }
  const Range& segment = ranges_[ref.segment()];
  if (!range_inside(ref.offset(), needed, segment.size)) {
    return invalid_model(
        "{} needs {} bytes at offset {} of segment #{} but "
        "its segment holds {}",
        what, needed, ref.offset(), ref.segment(), segment.size);
  }
  return area_ + segment.offset + ref.offset();
}

Status validate_graph(const Graph& graph, const OpRegistry* registry) {
  SEQRT_RETURN_IF_ERROR(verify_graph(graph));
  if (registry != nullptr) SEQRT_RETURN_IF_ERROR(check_ops(graph, *registry));
  return Status::ok();
}

}  // namespace seqrt
