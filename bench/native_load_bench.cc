// How long loading a .seqrt model takes, against reading the same bytes
// into memory with plain read(): the reader maps the file and uses the
// weights in place, so its cost should not grow with the weights.
//
// The model is an MLP of 1024x1024 f32 MatMul+Relu layers (4 MiB each)
// with the given MiB of weights, written once to the temp dir. All runs
// read from the page cache (warm); see README.md.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>

#include "graph/builder.h"
#include "importers/native/reader.h"
#include "importers/native/writer.h"

namespace seqrt {
namespace {

constexpr int64_t kWidth = 1024;
constexpr int64_t kLayerBytes = kWidth * kWidth * 4;

Result<Graph> mlp_graph(int64_t weight_mib) {
  GraphBuilder b("mlp");
  ValueId h = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), kWidth});
  std::vector<float> values(static_cast<size_t>(kWidth * kWidth));
  for (int64_t layer = 0; layer < weight_mib * (1 << 20) / kLayerBytes;
       ++layer) {
    // Non-zero weights: zero runs would be written as holes.
    for (size_t i = 0; i < values.size(); ++i) {
      values[i] = 0.001f * static_cast<float>((i + layer) % 997 + 1);
    }
    ValueId w =
        b.constant("w" + std::to_string(layer),
                   Tensor::from_vector<float>({kWidth, kWidth}, values));
    h = b.add("Relu", {b.add("MatMul", {h, w})});
  }
  b.output(h, "y");
  return std::move(b).build();
}

// The model file for `weight_mib`, written on first use and removed at
// exit.
class ModelFiles {
 public:
  ~ModelFiles() {
    for (const auto& [mib, path] : paths_) std::filesystem::remove(path);
  }
  Result<std::string> get(int64_t weight_mib) {
    auto found = paths_.find(weight_mib);
    if (found != paths_.end()) return found->second;
    std::string path = (std::filesystem::temp_directory_path() /
                        ("seqrt_load_bench_" + std::to_string(::getpid()) +
                         "_" + std::to_string(weight_mib) + ".seqrt"))
                           .string();
    SEQRT_ASSIGN_OR_RETURN(Graph graph, mlp_graph(weight_mib));
    SEQRT_RETURN_IF_ERROR(write_seqrt_file(graph, path));
    paths_[weight_mib] = path;
    return path;
  }

 private:
  std::map<int64_t, std::string> paths_;
};

ModelFiles& model_files() {
  static ModelFiles files;
  return files;
}

// The whole file in 64-byte aligned memory with plain read() calls.
Result<std::shared_ptr<uint8_t>> read_whole_file(const std::string& path,
                                                 size_t& size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error("'{}': cannot open", path);
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    ::close(fd);
    return io_error("'{}': cannot stat", path);
  }
  size = static_cast<size_t>(info.st_size);
  auto* memory =
      static_cast<uint8_t*>(std::aligned_alloc(64, (size + 63) / 64 * 64));
  std::shared_ptr<uint8_t> data(memory, [](uint8_t* p) { std::free(p); });
  size_t done = 0;
  while (done < size) {
    ssize_t got = ::read(fd, memory + done, size - done);
    if (got <= 0) break;
    done += static_cast<size_t>(got);
  }
  ::close(fd);
  if (done != size) return io_error("'{}': short read", path);
  return data;
}

// Reads one byte per 4 KiB page of every constant, as a first use would.
uint64_t touch_weights(const Graph& graph) {
  uint64_t sum = 0;
  for (const auto& [id, tensor] : graph.constants) {
    const auto* bytes = static_cast<const uint8_t*>(tensor.data());
    for (size_t i = 0; i < tensor.byte_size(); i += 4096) sum += bytes[i];
  }
  return sum;
}

bool prepare(benchmark::State& state, std::string& path) {
  Result<std::string> file = model_files().get(state.range(0));
  if (!file.is_ok()) {
    state.SkipWithError(file.status().to_string().c_str());
    return false;
  }
  path = *file;
  return true;
}

void report(benchmark::State& state) {
  state.SetBytesProcessed(state.iterations() * state.range(0) * (1 << 20));
  state.counters["weight_MiB"] = static_cast<double>(state.range(0));
}

// read_seqrt_file: map, validate, weights as views (nothing copied).
void BM_LoadSeqrt_Mmap(benchmark::State& state) {
  std::string path;
  if (!prepare(state, path)) return;
  for (auto _ : state) {
    Result<Graph> graph = read_seqrt_file(path);
    if (!graph.is_ok()) {
      state.SkipWithError(graph.status().to_string().c_str());
      return;
    }
    benchmark::DoNotOptimize(graph->constants.size());
  }
  report(state);
}

// As above, then a first touch of every weight page (page-cache faults).
void BM_LoadSeqrt_MmapThenTouchWeights(benchmark::State& state) {
  std::string path;
  if (!prepare(state, path)) return;
  for (auto _ : state) {
    Result<Graph> graph = read_seqrt_file(path);
    if (!graph.is_ok()) {
      state.SkipWithError(graph.status().to_string().c_str());
      return;
    }
    benchmark::DoNotOptimize(touch_weights(*graph));
  }
  report(state);
}

// The baseline: read() the same file into memory, nothing parsed.
void BM_ReadFile_PlainRead(benchmark::State& state) {
  std::string path;
  if (!prepare(state, path)) return;
  for (auto _ : state) {
    size_t size = 0;
    Result<std::shared_ptr<uint8_t>> data = read_whole_file(path, size);
    if (!data.is_ok()) {
      state.SkipWithError(data.status().to_string().c_str());
      return;
    }
    benchmark::DoNotOptimize(data->get()[size - 1]);
  }
  report(state);
}

// read() into memory, then read_seqrt_buffer over it (views into the copy).
void BM_LoadSeqrt_PlainReadThenParse(benchmark::State& state) {
  std::string path;
  if (!prepare(state, path)) return;
  for (auto _ : state) {
    size_t size = 0;
    Result<std::shared_ptr<uint8_t>> data = read_whole_file(path, size);
    if (!data.is_ok()) {
      state.SkipWithError(data.status().to_string().c_str());
      return;
    }
    Result<Graph> graph = read_seqrt_buffer(*data, data->get(), size);
    if (!graph.is_ok()) {
      state.SkipWithError(graph.status().to_string().c_str());
      return;
    }
    benchmark::DoNotOptimize(graph->constants.size());
  }
  report(state);
}

// Argument: MiB of weights.
BENCHMARK(BM_LoadSeqrt_Mmap)->Arg(16)->Arg(100)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LoadSeqrt_MmapThenTouchWeights)
    ->Arg(16)
    ->Arg(100)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReadFile_PlainRead)
    ->Arg(16)
    ->Arg(100)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LoadSeqrt_PlainReadThenParse)
    ->Arg(16)
    ->Arg(100)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace seqrt

BENCHMARK_MAIN();
