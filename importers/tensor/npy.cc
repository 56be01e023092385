#include "importers/tensor/npy.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "graph/regular_file.h"

namespace seqrt {
namespace {

// Tensor storage is host-native and npy data is written little-endian
// without conversion; a big-endian host would need byte swaps everywhere.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "seqrt's .npy code assumes a little-endian host");

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicBytes = 6;
// A header dim has at most this many digits, so parsing cannot overflow;
// checked_num_elements() bounds the product.
constexpr size_t kMaxDimDigits = 15;

struct NpyHeader {
  DType dtype = DType::kUndefined;
  bool big_endian = false;
  bool fortran_order = false;
  std::vector<int64_t> dims;
};

// The descr strings seqrt reads, without their byte-order character.
struct DescrEntry {
  const char* code;
  DType dtype;
};
constexpr DescrEntry kDescrs[] = {
    {"f4", DType::kF32}, {"f2", DType::kF16},  {"f8", DType::kF64},
    {"i1", DType::kI8},  {"u1", DType::kU8},   {"i4", DType::kI32},
    {"i8", DType::kI64}, {"b1", DType::kBool},
};

// A strict parser of the header: a Python dict literal with exactly the
// keys 'descr' (a string), 'fortran_order' (True/False) and 'shape' (a
// tuple of non-negative ints), as NumPy writes it.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name)
      : text_(text), name_(name) {}

  Result<NpyHeader> parse();

 private:
  template <typename... Args>
  Status error(fmt::format_string<Args...> format, Args&&... args) const {
    return invalid_argument("'{}': bad .npy header at byte {}: {}", name_, pos_,
                            fmt::format(format, std::forward<Args>(args)...));
  }

  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
            text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool peek(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool consume(char c) {
    if (!peek(c)) return false;
    ++pos_;
    return true;
  }
  Status expect(char c, const char* what) {
    if (consume(c)) return Status::ok();
    return error("expected '{}' {}", c, what);
  }

  Result<std::string> parse_string();
  Result<bool> parse_bool();
  Result<int64_t> parse_dim();
  Result<std::vector<int64_t>> parse_shape();
  Status parse_descr(NpyHeader& header);
  Status parse_entry(NpyHeader& header, std::vector<std::string>& seen);

  std::string_view text_;
  const std::string& name_;
  size_t pos_ = 0;
};

Result<std::string> HeaderParser::parse_string() {
  skip_space();
  if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
    return error("expected a quoted string");
  }
  char quote = text_[pos_++];
  size_t start = pos_;
  while (pos_ < text_.size() && text_[pos_] != quote) {
    // Escapes never occur in the strings of a valid header.
    if (text_[pos_] == '\\' || text_[pos_] == '\n') {
      return error("unexpected character in a string");
    }
    ++pos_;
  }
  if (pos_ >= text_.size()) return error("unterminated string");
  std::string value(text_.substr(start, pos_ - start));
  ++pos_;
  return value;
}

Result<bool> HeaderParser::parse_bool() {
  skip_space();
  std::string_view rest = text_.substr(pos_);
  for (auto [word, value] : {std::pair{std::string_view("True"), true},
                             std::pair{std::string_view("False"), false}}) {
    if (rest.substr(0, word.size()) == word) {
      pos_ += word.size();
      return value;
    }
  }
  return error("expected True or False for 'fortran_order'");
}

Result<int64_t> HeaderParser::parse_dim() {
  skip_space();
  size_t start = pos_;
  int64_t value = 0;
  while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
    if (pos_ - start >= kMaxDimDigits) return error("shape dim is too large");
    value = value * 10 + (text_[pos_] - '0');
    ++pos_;
  }
  if (pos_ == start) return error("expected a non-negative integer in 'shape'");
  // Python 2 wrote long integers with an 'L' suffix.
  if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;
  return value;
}

Result<std::vector<int64_t>> HeaderParser::parse_shape() {
  SEQRT_RETURN_IF_ERROR(expect('(', "to open the 'shape' tuple"));
  std::vector<int64_t> dims;
  bool trailing_comma = false;
  while (!consume(')')) {
    if (!dims.empty() && !trailing_comma) {
      return error("expected ',' or ')' in 'shape'");
    }
    if (dims.size() >= kMaxNpyRank) {
      return error("'shape' has more than {} dims", kMaxNpyRank);
    }
    SEQRT_ASSIGN_OR_RETURN(int64_t dim, parse_dim());
    dims.push_back(dim);
    trailing_comma = consume(',');
  }
  // In Python "(3)" is the integer 3, not a tuple.
  if (dims.size() == 1 && !trailing_comma) {
    return error("a 1-d 'shape' needs a trailing comma, as in (3,)");
  }
  return dims;
}

Status HeaderParser::parse_descr(NpyHeader& header) {
  skip_space();
  if (peek('[')) {
    return unsupported("'{}': structured .npy arrays are not supported", name_);
  }
  SEQRT_ASSIGN_OR_RETURN(std::string descr, parse_string());
  if (descr.size() == 3) {
    char order = descr[0];
    std::string_view code = std::string_view(descr).substr(1);
    for (const DescrEntry& entry : kDescrs) {
      if (code != entry.code) continue;
      bool one_byte = dtype_size(entry.dtype) == 1;
      // '|' (not applicable) only makes sense for one-byte types.
      if (order == '<' || order == '>' || order == '=' ||
          (order == '|' && one_byte)) {
        header.dtype = entry.dtype;
        header.big_endian = order == '>' && !one_byte;
        return Status::ok();
      }
    }
  }
  return unsupported(
      "'{}': .npy dtype '{}' is not supported; expected one of <f4 <f2 <f8 "
      "|i1 |u1 <i4 <i8 |b1 (or '>' big-endian forms)",
      name_, descr.substr(0, 32));
}

Status HeaderParser::parse_entry(NpyHeader& header,
                                 std::vector<std::string>& seen) {
  SEQRT_ASSIGN_OR_RETURN(std::string key, parse_string());
  for (const std::string& done : seen) {
    if (done == key) return error("key '{}' appears twice", key);
  }
  seen.push_back(key);
  SEQRT_RETURN_IF_ERROR(expect(':', "after a key"));
  if (key == "descr") return parse_descr(header);
  if (key == "fortran_order") {
    SEQRT_ASSIGN_OR_RETURN(header.fortran_order, parse_bool());
    return Status::ok();
  }
  if (key == "shape") {
    SEQRT_ASSIGN_OR_RETURN(header.dims, parse_shape());
    return Status::ok();
  }
  return error("unknown key '{}'; expected 'descr', 'fortran_order', 'shape'",
               key);
}

Result<NpyHeader> HeaderParser::parse() {
  NpyHeader header;
  std::vector<std::string> seen;
  SEQRT_RETURN_IF_ERROR(expect('{', "to open the header dict"));
  bool trailing_comma = true;
  while (!consume('}')) {
    if (!trailing_comma)
      return error("expected ',' or '}}' in the header dict");
    SEQRT_RETURN_IF_ERROR(parse_entry(header, seen));
    trailing_comma = consume(',');
  }
  skip_space();
  if (pos_ != text_.size()) return error("unexpected text after the dict");
  if (seen.size() != 3) {
    return error(
        "the dict must have the keys 'descr', 'fortran_order' and "
        "'shape'");
  }
  return header;
}

uint32_t read_le(const uint8_t* data, size_t bytes) {
  uint32_t value = 0;
  for (size_t i = 0; i < bytes; ++i) value |= uint32_t{data[i]} << (8 * i);
  return value;
}

// The header text and the offset of the data, from the fixed preamble.
Result<std::pair<std::string_view, size_t>> split_preamble(
    const uint8_t* data, size_t size, const std::string& name) {
  if (size < kMagicBytes + 2 || std::memcmp(data, kMagic, kMagicBytes) != 0) {
    return invalid_argument("'{}': not a .npy file (no \\x93NUMPY magic)",
                            name);
  }
  uint8_t major = data[kMagicBytes];
  uint8_t minor = data[kMagicBytes + 1];
  if (major < 1 || major > 3 || minor != 0) {
    return unsupported(
        "'{}': .npy format version {}.{} is not supported (expected 1.0, 2.0 "
        "or 3.0)",
        name, major, minor);
  }
  size_t length_bytes = major == 1 ? 2 : 4;
  size_t header_start = kMagicBytes + 2 + length_bytes;
  if (size < header_start) {
    return invalid_argument("'{}': .npy file is truncated in its preamble",
                            name);
  }
  size_t header_bytes = read_le(data + kMagicBytes + 2, length_bytes);
  if (header_bytes > kMaxNpyHeaderBytes) {
    return invalid_argument(
        "'{}': .npy header of {} bytes exceeds the limit "
        "of {} bytes",
        name, header_bytes, kMaxNpyHeaderBytes);
  }
  if (size - header_start < header_bytes) {
    return invalid_argument(
        "'{}': .npy file is truncated: the header needs {} bytes, the file "
        "has {}",
        name, header_bytes, size - header_start);
  }
  std::string_view text(reinterpret_cast<const char*>(data + header_start),
                        header_bytes);
  return std::pair{text, header_start + header_bytes};
}

void byte_swap(Tensor& tensor) {
  size_t item = dtype_size(tensor.dtype());
  auto* bytes = static_cast<uint8_t*>(tensor.mutable_data());
  for (size_t i = 0; i < tensor.byte_size(); i += item) {
    for (size_t a = 0, b = item - 1; a < b; ++a, --b) {
      std::swap(bytes[i + a], bytes[i + b]);
    }
  }
}

// Copies Fortran-ordered (first dim fastest) `src` into `dst` in C order.
void copy_fortran_to_c(const uint8_t* src, Tensor& dst) {
  const std::vector<int64_t>& dims = dst.dims();
  size_t item = dtype_size(dst.dtype());
  auto* out = static_cast<uint8_t*>(dst.mutable_data());
  std::vector<int64_t> strides(dims.size());
  int64_t stride = 1;
  for (size_t k = 0; k < dims.size(); ++k) {
    strides[k] = stride;
    stride *= dims[k];
  }
  std::vector<int64_t> index(dims.size(), 0);
  int64_t from = 0;
  for (int64_t i = 0; i < dst.num_elements(); ++i) {
    std::memcpy(out + i * item, src + from * item, item);
    for (size_t k = dims.size(); k-- > 0;) {
      from += strides[k];
      if (++index[k] < dims[k]) break;
      from -= strides[k] * dims[k];
      index[k] = 0;
    }
  }
}

const char* descr_for(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "<f4";
    case DType::kBF16:
      return "<f4";  // npy has no bfloat16 code
    case DType::kF16:
      return "<f2";
    case DType::kF64:
      return "<f8";
    case DType::kI8:
      return "|i1";
    case DType::kU8:
      return "|u1";
    case DType::kI32:
      return "<i4";
    case DType::kI64:
      return "<i8";
    case DType::kI4:  // npy_compatible() widened these
    case DType::kU4:
    case DType::kF8E4M3FN:
    case DType::kF8E4M3FNUZ:
    case DType::kF8E5M2:
    case DType::kF8E5M2FNUZ:
    case DType::kF8E8M0:
    case DType::kF4E2M1:
      return nullptr;
    case DType::kBool:
      return "|b1";
    case DType::kUndefined:
      break;
  }
  return nullptr;
}

std::string shape_literal(const std::vector<int64_t>& dims) {
  if (dims.size() == 1) return fmt::format("({},)", dims[0]);
  return fmt::format("({})", fmt::join(dims, ", "));
}

}  // namespace

Result<Tensor> read_npy_buffer(const uint8_t* data, size_t size,
                               const std::string& name_for_errors) {
  const std::string& name = name_for_errors;
  SEQRT_ASSIGN_OR_RETURN(auto preamble, split_preamble(data, size, name));
  auto [text, data_offset] = preamble;
  SEQRT_ASSIGN_OR_RETURN(NpyHeader header, HeaderParser(text, name).parse());

  Result<int64_t> count = checked_num_elements(header.dims);
  if (!count.is_ok()) {
    return invalid_argument("'{}': .npy shape {} is too large: {}", name,
                            dims_to_string(header.dims),
                            count.status().message());
  }
  // count <= kMaxElements and items are at most 8 bytes: no overflow.
  size_t expected = static_cast<size_t>(*count) * dtype_size(header.dtype);
  size_t available = size - data_offset;
  if (available != expected) {
    return invalid_argument(
        "'{}': .npy data of a {} array of shape {} must be {} bytes, the file "
        "has {}",
        name, dtype_name(header.dtype), dims_to_string(header.dims), expected,
        available);
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor tensor,
                         Tensor::allocate(header.dtype, header.dims));
  if (header.fortran_order && tensor.rank() > 1) {
    copy_fortran_to_c(data + data_offset, tensor);
  } else if (expected > 0) {
    std::memcpy(tensor.mutable_data(), data + data_offset, expected);
  }
  if (header.big_endian) byte_swap(tensor);
  if (header.dtype == DType::kBool) {
    // Any non-zero byte is true; store the canonical 1.
    auto* bytes = static_cast<uint8_t*>(tensor.mutable_data());
    for (int64_t i = 0; i < tensor.num_elements(); ++i) {
      bytes[i] = bytes[i] != 0 ? 1 : 0;
    }
  }
  return tensor;
}

Result<Tensor> read_npy_file(const std::string& path) {
  SEQRT_ASSIGN_OR_RETURN(RegularFile regular, RegularFile::open(path));
  std::FILE* file = regular.release_to_stream();
  if (file == nullptr) return io_error("cannot read '{}'", path);
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  size_t got = 0;
  while ((got = std::fread(chunk, 1, sizeof(chunk), file)) > 0) {
    bytes.insert(bytes.end(), chunk, chunk + got);
  }
  bool failed = std::ferror(file) != 0;
  int error = errno;
  std::fclose(file);
  if (failed) {
    return io_error("cannot read '{}': {}", path, std::strerror(error));
  }
  return read_npy_buffer(bytes.data(), bytes.size(), path);
}

Result<Tensor> npy_compatible(const Tensor& tensor) {
  DType wide = DType::kUndefined;
  if (tensor.dtype() == DType::kI4) wide = DType::kI8;
  if (tensor.dtype() == DType::kU4) wide = DType::kU8;
  if (is_storage_float(tensor.dtype())) wide = DType::kF32;
  if (wide == DType::kUndefined) return tensor;
  SEQRT_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(wide, tensor.dims()));
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    out.set_element_f64(i, tensor.element_f64(i));  // exact
  }
  return out;
}

Result<Tensor> from_npy_compatible(const Tensor& tensor, DType wanted,
                                   const std::string& name_for_errors) {
  if (tensor.dtype() == wanted || !is_storage_only(wanted)) return tensor;
  const DType carrier = wanted == DType::kI4   ? DType::kI8
                        : wanted == DType::kU4 ? DType::kU8
                                               : DType::kF32;
  if (tensor.dtype() != carrier) {
    return invalid_argument("{}: a {} tensor is given as {}, got {}",
                            name_for_errors, dtype_name(wanted),
                            dtype_name(carrier), dtype_name(tensor.dtype()));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(wanted, tensor.dims()));
  const int64_t lo = wanted == DType::kI4 ? -8 : 0;
  const int64_t hi = wanted == DType::kI4 ? 7 : 15;
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    if (carrier == DType::kF32) {
      out.set_element_f64(i, tensor.element_f64(i));
      continue;
    }
    const int64_t value = tensor.element_i64(i);
    if (value < lo || value > hi) {
      return invalid_argument(
          "{}: element {} is {}, outside the {} range {} "
          "to {}",
          name_for_errors, i, value, dtype_name(wanted), lo, hi);
    }
    out.set_element_i64(i, value);
  }
  return out;
}

Status feeds_from_npy_compatible(const Graph& graph,
                                 std::map<std::string, Tensor>& feeds) {
  for (ValueId id : graph.inputs) {
    const Value& value = graph.value(id);
    auto it = feeds.find(value.name);
    if (it == feeds.end() || !is_storage_only(value.dtype)) continue;
    SEQRT_ASSIGN_OR_RETURN(
        it->second, from_npy_compatible(it->second, value.dtype,
                                        fmt::format("input '{}'", value.name)));
  }
  return Status::ok();
}

Result<std::vector<uint8_t>> write_npy_buffer(const Tensor& stored) {
  SEQRT_ASSIGN_OR_RETURN(const Tensor tensor, npy_compatible(stored));
  const char* descr = descr_for(tensor.dtype());
  if (descr == nullptr) {
    return invalid_argument("cannot write a tensor of undefined dtype as .npy");
  }
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                  descr, shape_literal(tensor.dims()));
  // Version 1.0 has a 16-bit header length; pad so the data starts at a
  // multiple of 64 bytes, as NumPy does.
  uint8_t major = header.size() + 1 + 64 <= 0xffff ? 1 : 2;
  size_t preamble = kMagicBytes + 2 + (major == 1 ? 2 : 4);
  size_t total = preamble + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');

  std::vector<uint8_t> out(kMagic, kMagic + kMagicBytes);
  out.push_back(major);
  out.push_back(0);
  for (size_t i = 0; i < preamble - kMagicBytes - 2; ++i) {
    out.push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  }
  out.insert(out.end(), header.begin(), header.end());
  if (tensor.dtype() == DType::kBF16) {
    for (int64_t i = 0; i < tensor.num_elements(); ++i) {
      float value = static_cast<float>(tensor.element_f64(i));
      const auto* bytes = reinterpret_cast<const uint8_t*>(&value);
      out.insert(out.end(), bytes, bytes + sizeof(value));
    }
  } else {
    const auto* bytes = static_cast<const uint8_t*>(tensor.data());
    out.insert(out.end(), bytes, bytes + tensor.byte_size());
  }
  return out;
}

Status write_npy_file(const Tensor& tensor, const std::string& path) {
  Result<std::vector<uint8_t>> bytes = write_npy_buffer(tensor);
  if (!bytes.is_ok()) return bytes.status().with_context(path);
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    return io_error("cannot create '{}': {}", path, std::strerror(errno));
  }
  size_t written = std::fwrite(bytes->data(), 1, bytes->size(), file);
  int error = errno;
  bool closed = std::fclose(file) == 0;
  if (written != bytes->size() || !closed) {
    return io_error("cannot write '{}': {}", path, std::strerror(error));
  }
  return Status::ok();
}

}  // namespace seqrt
