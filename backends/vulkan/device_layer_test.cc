// The device layer below the executable: allocator, recorder barriers,
// range limits and the pipeline cache file.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "backends/vulkan/executable.h"
#include "backends/vulkan/test_util.h"

namespace seqrt::vulkan {
namespace {

TEST(VulkanAllocator, SlicesAreAlignedAndReused) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  Allocator allocator(device_of(*backend), 1 << 20);
  auto a = allocator.allocate(100, MemoryPlace::kDevice, "test");
  auto b = allocator.allocate(0, MemoryPlace::kDevice, "test");
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_EQ((*a)->slice().offset % allocator.alignment(), 0u);
  EXPECT_EQ((*b)->slice().offset % allocator.alignment(), 0u);
  EXPECT_GT((*b)->slice().bytes, 0u);  // even 0 bytes can be bound
  VkDeviceSize first = (*a)->slice().offset;
  a->reset();
  auto c = allocator.allocate(64, MemoryPlace::kDevice, "test");
  ASSERT_TRUE(c.is_ok());
  EXPECT_EQ((*c)->slice().offset, first);  // the freed range is reused
  auto big = allocator.allocate(3 << 20, MemoryPlace::kDevice, "test");
  ASSERT_TRUE(big.is_ok());
  EXPECT_EQ(allocator.block_count(), 2);  // a large request gets its block
  auto staged = allocator.allocate(16, MemoryPlace::kStaging, "test");
  ASSERT_TRUE(staged.is_ok());
  EXPECT_NE((*staged)->mapped(), nullptr);
}

// upload()/download(): what constants, inputs, outputs and states cross by.
TEST(VulkanTransfer, RoundTripsAndRefusesMoreThanTheBuffer) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  DeviceContext context;
  context.device = device_of(*backend);
  context.allocator = std::make_shared<Allocator>(context.device, 1 << 20);
  context.pipelines = std::make_shared<Pipelines>(context.device);
  auto buffer = context.allocator->allocate(20, MemoryPlace::kDevice, "t");
  ASSERT_TRUE(buffer.is_ok());
  BufferSlice slice = (*buffer)->slice();
  slice.bytes = 20;
  std::vector<float> host = {1, 2, 3, 4, 5};
  ASSERT_TRUE(upload(context, slice, host.data(), 20, "up").is_ok());
  std::vector<float> back(5, 0.0f);
  ASSERT_TRUE(download(context, slice, back.data(), 20, "down").is_ok());
  EXPECT_EQ(back, host);
  std::vector<float> big(100, 0.0f);
  Status refused = download(context, slice, big.data(), 400, "reading t");
  EXPECT_FALSE(refused.is_ok());
  EXPECT_NE(refused.message().find("reading t: 400 bytes do not fit a 20-byte "
                                   "buffer"),
            std::string::npos)
      << refused.message();
}

struct RecorderFixture {
  std::shared_ptr<Device> device;
  std::shared_ptr<Allocator> allocator;
  std::shared_ptr<Pipelines> pipelines;
  std::unique_ptr<Allocation> a, b, c;
};

Dispatch copy_words(const BufferSlice& src, const BufferSlice& dst) {
  Dispatch d;
  d.shader = "unary";
  d.specialization = {64, 12};  // identity
  d.push_constants = push_bytes({static_cast<uint32_t>(src.bytes / 4), 0, 0});
  d.reads = {src};
  d.writes = {dst};
  d.groups = {1, 1, 1};
  return d;
}

TEST(VulkanRecorder, BarriersOnlyWhereRangesDepend) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  auto device = device_of(*backend);
  Allocator allocator(device, 1 << 20);
  Pipelines pipelines(device);
  auto a = allocator.allocate(256, MemoryPlace::kDevice, "t").value();
  auto b = allocator.allocate(256, MemoryPlace::kDevice, "t").value();
  auto c = allocator.allocate(256, MemoryPlace::kDevice, "t").value();
  auto d = allocator.allocate(256, MemoryPlace::kDevice, "t").value();
  CommandRecorder recorder(device, pipelines, allocator);
  ASSERT_TRUE(recorder.fill(a->slice(), 0).is_ok());
  EXPECT_EQ(recorder.barrier_count(), 0);
  ASSERT_TRUE(recorder.fill(c->slice(), 0).is_ok());
  EXPECT_EQ(recorder.barrier_count(), 0);  // independent ranges
  ASSERT_TRUE(recorder.dispatch(copy_words(a->slice(), b->slice())).is_ok());
  EXPECT_EQ(recorder.barrier_count(), 1);  // reads what the fill wrote
  ASSERT_TRUE(recorder.dispatch(copy_words(c->slice(), d->slice())).is_ok());
  EXPECT_EQ(recorder.barrier_count(), 1);  // c was made visible already
  ASSERT_TRUE(recorder.dispatch(copy_words(d->slice(), a->slice())).is_ok());
  EXPECT_EQ(recorder.barrier_count(), 2);  // reads d, overwrites a (read)
  auto program = recorder.finish();
  ASSERT_TRUE(program.is_ok()) << program.status().to_string();
  EXPECT_EQ((*program)->dispatches(), 3);
  ASSERT_TRUE((*program)->run("test").is_ok());
  EXPECT_EQ(device->validation_messages(), 0)
      << fmt::format("{}", fmt::join(device->validation_log(), "\n"));
}

TEST(VulkanRecorder, RejectsABindingOverTheRangeLimit) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  auto device = device_of(*backend);
  Allocator allocator(device, 1 << 20);
  Pipelines pipelines(device);
  auto a = allocator.allocate(256, MemoryPlace::kDevice, "t").value();
  CommandRecorder recorder(device, pipelines, allocator);
  BufferSlice huge = a->slice();
  huge.bytes = device->limits().max_storage_buffer_range + 4;
  Status status = recorder.dispatch(copy_words(a->slice(), huge));
  ASSERT_FALSE(status.is_ok());
  EXPECT_EQ(status.code(), StatusCode::kLimitExceeded);
  EXPECT_NE(status.message().find("maxStorageBufferRange"), std::string::npos);
  Dispatch bad = copy_words(a->slice(), a->slice());
  bad.shader = "no_such_shader";
  EXPECT_EQ(recorder.dispatch(bad).code(), StatusCode::kNotFound);
}

TEST(VulkanPipelineCache, SavedAndACorruptFileIgnored) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("seqrt_vk_cache_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "cache.bin").string();
  setenv("SEQRT_VULKAN_PIPELINE_CACHE", path.c_str(), 1);
  {
    SEQRT_OPEN_VULKAN_OR_SKIP(backend);
    Pipelines pipelines(device_of(*backend));
    EXPECT_EQ(pipelines.cache_path(), path);
    ASSERT_TRUE(pipelines.get("unary", {64, 0}, 2).is_ok());
    ASSERT_TRUE(pipelines.save().is_ok());
  }
  EXPECT_TRUE(std::filesystem::exists(path));
  {
    SEQRT_OPEN_VULKAN_OR_SKIP(backend);
    Pipelines pipelines(device_of(*backend));
    EXPECT_TRUE(pipelines.loaded_from_disk());
  }
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << "not a pipeline cache at all, but long enough to have a header";
  }
  {
    SEQRT_OPEN_VULKAN_OR_SKIP(backend);
    Pipelines pipelines(device_of(*backend));
    EXPECT_FALSE(pipelines.loaded_from_disk());
    EXPECT_TRUE(pipelines.get("binary", {64, 0}, 3).is_ok());
    EXPECT_EQ(device_of(*backend)->validation_messages(), 0);
  }
  unsetenv("SEQRT_VULKAN_PIPELINE_CACHE");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace seqrt::vulkan
