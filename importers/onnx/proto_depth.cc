#include "importers/onnx/proto_depth.h"

#include <algorithm>
#include <cstdint>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

namespace seqrt {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

// Field numbers of onnx.proto that lead from a model to its subgraphs.
constexpr int kModelGraph = 7;
constexpr int kModelTrainingInfo = 20;
constexpr int kModelFunctions = 25;
constexpr int kTrainingInitialization = 1;
constexpr int kTrainingAlgorithm = 2;
constexpr int kGraphNode = 1;
constexpr int kFunctionNode = 7;
constexpr int kNodeAttribute = 5;
constexpr int kAttributeGraph = 6;
constexpr int kAttributeGraphs = 11;

enum class Kind { kModel, kTrainingInfo, kGraph, kFunction, kNode, kAttribute };

class DepthScan {
 public:
  DepthScan(CodedInputStream& stream, int limit)
      : stream_(stream), limit_(limit) {}

  int run() {
    if (!scan(Kind::kModel, 0) && !past_limit_) return -1;
    return deepest_;
  }

 private:
  // Whether field `field` of a `kind` message leads towards subgraphs, and
  // then the kind of message it holds.
  static bool child(Kind kind, int field, Kind& child_kind) {
    switch (kind) {
      case Kind::kModel:
        child_kind = field == kModelGraph       ? Kind::kGraph
                     : field == kModelFunctions ? Kind::kFunction
                                                : Kind::kTrainingInfo;
        return field == kModelGraph || field == kModelFunctions ||
               field == kModelTrainingInfo;
      case Kind::kTrainingInfo:
        child_kind = Kind::kGraph;
        return field == kTrainingInitialization || field == kTrainingAlgorithm;
      case Kind::kGraph:
        child_kind = Kind::kNode;
        return field == kGraphNode;
      case Kind::kFunction:
        child_kind = Kind::kNode;
        return field == kFunctionNode;
      case Kind::kNode:
        child_kind = Kind::kAttribute;
        return field == kNodeAttribute;
      case Kind::kAttribute:
        child_kind = Kind::kGraph;
        return field == kAttributeGraph || field == kAttributeGraphs;
    }
    return false;
  }

  // Scans one message of `kind` up to the stream's current limit; false on
  // malformed bytes or once past the limit (which stops the whole scan).
  bool scan(Kind kind, int level) {
    if (kind == Kind::kGraph) deepest_ = std::max(deepest_, level);
    if (level > limit_) {
      past_limit_ = true;
      return false;
    }
    while (true) {
      uint32_t tag = stream_.ReadTag();
      // 0: the end of this message's bytes, or malformed bytes.
      if (tag == 0) return stream_.ConsumedEntireMessage();
      int field = static_cast<int>(WireFormatLite::GetTagFieldNumber(tag));
      Kind child_kind = kind;
      if (WireFormatLite::GetTagWireType(tag) ==
              WireFormatLite::WIRETYPE_LENGTH_DELIMITED &&
          child(kind, field, child_kind)) {
        // A graph inside an attribute is one level deeper.
        int child_level = kind == Kind::kAttribute ? level + 1 : level;
        uint32_t length = 0;
        if (!stream_.ReadVarint32(&length) || length > INT32_MAX) return false;
        CodedInputStream::Limit outer =
            stream_.PushLimit(static_cast<int>(length));
        bool ok = scan(child_kind, child_level);
        if (!ok || stream_.BytesUntilLimit() != 0) return false;
        stream_.PopLimit(outer);
      } else if (!WireFormatLite::SkipField(&stream_, tag)) {
        return false;
      }
    }
  }

  CodedInputStream& stream_;
  const int limit_;
  int deepest_ = 0;
  bool past_limit_ = false;
};

}  // namespace

int onnx_subgraph_depth(google::protobuf::io::ZeroCopyInputStream& input,
                        int limit) {
  CodedInputStream stream(&input);
  stream.SetTotalBytesLimit(INT32_MAX);
  return DepthScan(stream, limit).run();
}

}  // namespace seqrt
