// The fixed header at the start of every .seqrt file (layout and
// compatibility rule in schema/README.md):
//
//   offset size  field
//        0    8  magic "SEQRT\r\n\x1a"
//        8    2  format major version (u16)
//       10    2  format minor version (u16)
//       12    4  header size in bytes (u32, 64 in version 1.0)
//       16    8  FlatBuffer offset (u64, from the start of the file)
//       24    8  FlatBuffer size (u64)
//       32    8  segment area offset (u64, a multiple of 64)
//       40    8  segment area size (u64)
//       48   16  reserved: written as zeros, ignored by readers
//
// All fields are little-endian.
#pragma once

#include <cstddef>
#include <cstdint>

namespace seqrt {

// The line-ending bytes catch files mangled by text-mode transfers.
inline constexpr uint8_t kSeqrtMagic[8] = {'S', 'E',  'Q',  'R',
                                           'T', '\r', '\n', 0x1a};
inline constexpr size_t kSeqrtHeaderSize = 64;
// Alignment of the segment area, of every segment and of every tensor's
// bytes inside its segment.
inline constexpr uint64_t kSeqrtSegmentAlignment = 64;

struct SeqrtHeader {
  uint16_t major = 0;
  uint16_t minor = 0;
  uint32_t header_size = 0;
  uint64_t flatbuffer_offset = 0;
  uint64_t flatbuffer_size = 0;
  uint64_t segments_offset = 0;
  uint64_t segments_size = 0;
};

// Writes the header's kSeqrtHeaderSize bytes (magic included) to `out`.
void encode_seqrt_header(const SeqrtHeader& header, uint8_t* out);
// Reads the fields after the magic; `data` holds kSeqrtHeaderSize bytes.
// Checks nothing: see validate_header() in validate.h.
SeqrtHeader decode_seqrt_header(const uint8_t* data);

// `value` rounded up to a multiple of kSeqrtSegmentAlignment.
inline uint64_t align_to_segment(uint64_t value) {
  return (value + kSeqrtSegmentAlignment - 1) / kSeqrtSegmentAlignment *
         kSeqrtSegmentAlignment;
}

}  // namespace seqrt
