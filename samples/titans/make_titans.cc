// make_titans DIR: writes DIR/titans_mac.seqrt, titans_mag.seqrt and
// titans_mal.seqrt, one Titans block each (samples/titans/README.md), with
// input "x" (2, 32, 32) f32 and output "y" of the same shape.
#include <cstdio>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "importers/native/writer.h"
#include "samples/titans/titans.h"

namespace seqrt::titans {
namespace {

constexpr uint32_t kSeed = 20250107;

Status write_blocks(const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return io_error("cannot create directory '{}': {}", dir, error.message());
  }
  for (Variant variant : {Variant::kMac, Variant::kMag, Variant::kMal}) {
    SEQRT_ASSIGN_OR_RETURN(Graph graph, build_titans_block(variant, kSeed));
    std::string path = (std::filesystem::path(dir) /
                        fmt::format("titans_{}.seqrt", variant_name(variant)))
                           .string();
    SEQRT_RETURN_IF_ERROR(write_seqrt_file(graph, path));
    fmt::print("wrote {} ({} nodes)\n", path, graph.nodes.size());
  }
  return Status::ok();
}

}  // namespace
}  // namespace seqrt::titans

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_titans DIR\n");
    return 2;
  }
  seqrt::Status status = seqrt::titans::write_blocks(argv[1]);
  if (!status.is_ok()) {
    std::fprintf(stderr, "make_titans: error: %s\n", status.message().c_str());
    return 1;
  }
  return 0;
}
