// A model with more than 2 GiB of weights: past the FlatBuffers limit, so
// only the segment layout makes it possible. The big constant is a view of
// untouched anonymous memory (zero pages) and the writer leaves zero runs
// as holes, so the test needs neither 2 GiB of RAM nor of disk.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/builder.h"
#include "importers/native/test_models.h"
#include "importers/native/writer.h"

namespace seqrt {
namespace {

constexpr int64_t kBigBytes = (int64_t{9} << 28) + 4096;  // 2.25 GiB + 4 KiB
constexpr int64_t kMarkers[] = {0, (int64_t{1} << 31) + 12345, kBigBytes - 1};

// A u8 tensor of kBigBytes bytes, zero except for the markers (value
// 1 + index), backed by anonymous memory that is never otherwise touched.
Result<Tensor> big_sparse_tensor() {
  void* memory = ::mmap(nullptr, kBigBytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) {
    return make_error(StatusCode::kOutOfMemory, "cannot reserve {} bytes",
                      kBigBytes);
  }
  auto* bytes = static_cast<uint8_t*>(memory);
  for (size_t i = 0; i < std::size(kMarkers); ++i) {
    bytes[kMarkers[i]] = static_cast<uint8_t>(1 + i);
  }
  std::shared_ptr<const void> owner(
      memory, [](const void* p) { ::munmap(const_cast<void*>(p), kBigBytes); });
  return Tensor::view(DType::kU8, {kBigBytes}, memory, std::move(owner));
}

long peak_rss_mib() {
  struct rusage usage;
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

TEST(NativeLargeFile, MoreThanTwoGiBOfWeights) {
  Result<Tensor> big = big_sparse_tensor();
  ASSERT_TRUE(big.is_ok()) << big.status().to_string();
  GraphBuilder b("large");
  b.constant("before", Tensor::from_vector<float>({4}, {1, 2, 3, 4}));
  b.constant("big", *big);
  b.constant("after", Tensor::from_vector<float>({4}, {5, 6, 7, 8}));
  Graph graph = std::move(b).build().value();
  big = Tensor();  // the graph holds the only reference now

  std::string path = testing_models::temp_path("large.seqrt");
  ASSERT_TRUE(write_seqrt_file(graph, path).is_ok());
  struct stat info;
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_GT(info.st_size, kBigBytes);
  // Sparse: the zero runs were skipped (a few MiB of blocks at most).
  EXPECT_LT(info.st_blocks * 512, int64_t{64} << 20);

  Result<Graph> back =
      read_seqrt_file(path, testing_models::test_read_options());
  ::unlink(path.c_str());
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  const Tensor& before = back->constants.at(0);
  const Tensor& read_big = back->constants.at(1);
  const Tensor& after = back->constants.at(2);
  ASSERT_TRUE(read_big.is_view());
  ASSERT_EQ(read_big.dims(), (std::vector<int64_t>{kBigBytes}));
  const auto* bytes = static_cast<const uint8_t*>(read_big.data());
  for (size_t i = 0; i < std::size(kMarkers); ++i) {
    EXPECT_EQ(bytes[kMarkers[i]], 1 + i) << "marker " << i;
  }
  EXPECT_EQ(bytes[kMarkers[1] - 1], 0);
  // "after" lies past the 2 GiB mark of the file; its bytes are intact.
  auto base = static_cast<const uint8_t*>(before.data());
  EXPECT_GT(static_cast<const uint8_t*>(after.data()) - base, int64_t{1} << 31);
  EXPECT_TRUE(after.same_as(graph.constants.at(2)));
  EXPECT_TRUE(before.same_as(graph.constants.at(0)));
  // Neither writing nor reading copied the weights into memory.
  EXPECT_LT(peak_rss_mib(), 1024);
}

}  // namespace
}  // namespace seqrt
