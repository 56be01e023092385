#include "importers/native/format.h"

#include <cstring>

namespace seqrt {
namespace {

// Byte-wise so the file is little-endian on every host.
template <typename T>
void put(uint8_t* out, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) {
    out[i] = static_cast<uint8_t>(static_cast<uint64_t>(value) >> (8 * i));
  }
}

template <typename T>
T get(const uint8_t* in) {
  uint64_t value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) {
    value |= static_cast<uint64_t>(in[i]) << (8 * i);
  }
  return static_cast<T>(value);
}

}  // namespace

void encode_seqrt_header(const SeqrtHeader& header, uint8_t* out) {
  std::memset(out, 0, kSeqrtHeaderSize);
  std::memcpy(out, kSeqrtMagic, sizeof(kSeqrtMagic));
  put<uint16_t>(out + 8, header.major);
  put<uint16_t>(out + 10, header.minor);
  put<uint32_t>(out + 12, header.header_size);
  put<uint64_t>(out + 16, header.flatbuffer_offset);
  put<uint64_t>(out + 24, header.flatbuffer_size);
  put<uint64_t>(out + 32, header.segments_offset);
  put<uint64_t>(out + 40, header.segments_size);
}

SeqrtHeader decode_seqrt_header(const uint8_t* data) {
  SeqrtHeader header;
  header.major = get<uint16_t>(data + 8);
  header.minor = get<uint16_t>(data + 10);
  header.header_size = get<uint32_t>(data + 12);
  header.flatbuffer_offset = get<uint64_t>(data + 16);
  header.flatbuffer_size = get<uint64_t>(data + 24);
  header.segments_offset = get<uint64_t>(data + 32);
  header.segments_size = get<uint64_t>(data + 40);
  return header;
}

}  // namespace seqrt
