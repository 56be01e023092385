// A Stream's KV-cache mode (SessionOptions::kv_cache_capacity): the steps
// run the session's fixed-capacity form (compiler/passes/fixed_capacity_kv_
// cache.h) on a Stream of its own whose caches are updated in place, while
// the caller keeps seeing the graph's own interface:
//
// - feeds are the graph's inputs; an `attention_mask` of (batch, L + Tk) is
//   padded with zeros to the capacity;
// - snapshot() returns each cache cut to its L cached tokens, as the
//   concatenating graph would hold it, and restore() takes that form;
// - a step whose tokens would not fit fails before it runs, the state kept.
//
// Because the caches are handed to each step, a step that fails once it
// has started resets the Stream (its error says so), as with
// Stream::set_update_state_in_place.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "compiler/passes/fixed_capacity_kv_cache.h"
#include "graph/tensor.h"
#include "runtime/session.h"

namespace seqrt {

class Stream;

class KvCacheStream {
 public:
  // `session` is the graph's own session, `cache_session` its fixed-
  // capacity form, `form` what the rewrite changed; all must outlive this.
  KvCacheStream(const Session& session, const Session& cache_session,
                const KvCacheRewrite& form);
  ~KvCacheStream();

  Result<std::map<std::string, Tensor>> run(
      const std::map<std::string, Tensor>& feeds,
      const SessionRunOptions& run_options);
  std::map<std::string, Tensor> snapshot() const;
  Result<std::map<std::string, Tensor>> read_snapshot() const;
  Status restore(std::map<std::string, Tensor> state);
  void reset();

  int64_t cached_tokens() const { return length_; }

 private:
  // The new tokens of a step, from the dims of its feeds.
  Result<int64_t> new_tokens(const std::map<std::string, Tensor>& feeds) const;
  // The capacity form of a snapshot -> the graph's own form.
  std::map<std::string, Tensor> to_graph_form(
      std::map<std::string, Tensor> state) const;
  bool is_cache(const std::string& name) const;

  const Session& session_;
  const KvCacheRewrite& form_;
  std::unique_ptr<Stream> steps_;  // on the capacity form, in place
  int64_t length_ = 0;             // tokens cached
};

}  // namespace seqrt
