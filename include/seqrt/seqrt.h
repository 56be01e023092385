/* seqrt C API: load a model, compile it for a backend, run it, and decode a
 * sequence step by step with its state kept inside the runtime.
 *
 * A worked example (error checks shortened to CHECK):
 *
 *   seqrt_model* model = NULL;
 *   CHECK(seqrt_model_load_file("model.seqrt", &model));
 *   seqrt_session_options* options = NULL;
 *   CHECK(seqrt_session_options_create(&options));
 *   CHECK(seqrt_session_options_set_backend(options, "cpu"));
 *   seqrt_session* session = NULL;
 *   CHECK(seqrt_session_create(model, options, &session));
 *
 *   float prompt[1 * 2 * 5 * 8];      // 5 positions, filled by the caller
 *   int64_t dims[4] = {1, 2, 5, 8};
 *   seqrt_tensor* x = NULL;           // borrows `prompt`: no copy
 *   CHECK(seqrt_tensor_borrow(SEQRT_DTYPE_F32, dims, 4, prompt,
 *                             sizeof(prompt), &x));
 *   seqrt_stream* stream = NULL;
 *   CHECK(seqrt_stream_create(session, &stream));
 *   const char* in_names[] = {"x"};
 *   const seqrt_tensor* inputs[] = {x};
 *   const char* out_names[] = {"y"};
 *   seqrt_tensor* y = NULL;
 *   CHECK(seqrt_stream_prefill(stream, in_names, inputs, 1, out_names, &y, 1));
 *   const float* values = NULL;
 *   CHECK(seqrt_tensor_data(y, (const void**)&values));
 *   ...then seqrt_stream_step() once per new position...
 *
 *   seqrt_tensor_release(y);  seqrt_tensor_release(x);
 *   seqrt_stream_release(stream);  seqrt_session_release(session);
 *   seqrt_session_options_release(options);  seqrt_model_release(model);
 *
 *   where CHECK(call) is: if (call != SEQRT_OK) { fprintf(stderr, "%s\n",
 *                          seqrt_last_error_message()); exit(1); }
 *
 * OWNERSHIP
 *   - A function that creates, loads or returns a new handle through an
 *     out-pointer (`seqrt_*_create`, `seqrt_*_load_*`, `seqrt_tensor_borrow`,
 *     the output tensors of a run, `seqrt_stream_snapshot`) gives the caller
 *     an owned handle; release it exactly once with `seqrt_<noun>_release`.
 *     Every release function accepts NULL and does nothing.
 *   - Accessors that return a pointer (names, strings, dims, tensor data)
 *     lend it: it stays valid until the handle it came from is released.
 *   - A handle passed as an argument is only borrowed for the call, except
 *     where a function says it keeps a reference (a session keeps what it
 *     needs of its model; a stream keeps its session alive), so handles may
 *     be released in any order.
 *   - `seqrt_tensor_borrow` is the one exception that points at caller
 *     memory: the caller keeps that memory alive and unchanged until the
 *     tensor (and every run that uses it) is finished.
 *
 * ERRORS
 *   Every function that can fail returns a seqrt_status; SEQRT_OK is 0. On
 *   failure, seqrt_last_error_message() gives the reason for the calling
 *   thread, and out-pointers are left unchanged. NULL handles or NULL
 *   out-pointers are SEQRT_INVALID_ARGUMENT, never a crash. No C++
 *   exception ever leaves this API.
 *
 * THREADS
 *   Each function states its thread-safety. In short: a model, a session
 *   and the tensors the API returns are immutable and may be shared by any
 *   number of threads; seqrt_session_run may be called from many threads at
 *   once (each run has its own context); a stream, a session options object
 *   and a tensor made by seqrt_tensor_create (while written through
 *   seqrt_tensor_mutable_data) belong to one thread at a time.
 *   seqrt_session_cancel may be called from any thread to stop the runs in
 *   flight on a session (SEQRT_CANCELLED); SEQRT_LIMIT_RUN_TIMEOUT_MS bounds
 *   each run (SEQRT_DEADLINE_EXCEEDED). Either leaves the session usable.
 *
 * VERSIONING
 *   SEQRT_VERSION_* give the version of these headers, seqrt_version() the
 *   library's. The library's SONAME is libseqrt.so.<SEQRT_ABI_VERSION>:
 *   functions and enum values are only ever added, never changed or
 *   removed, within one ABI version.
 */
#ifndef SEQRT_SEQRT_H_
#define SEQRT_SEQRT_H_

#include <stddef.h>
#include <stdint.h>

#include "seqrt/seqrt_version.h"

#if defined(SEQRT_BUILDING_LIBRARY)
#define SEQRT_API __attribute__((visibility("default")))
#else
#define SEQRT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Status and errors ------------------------------------------------ */

typedef enum seqrt_status {
  SEQRT_OK = 0,
  SEQRT_INVALID_ARGUMENT = 1, /* bad input: NULL, names, dtypes, shapes */
  SEQRT_INVALID_MODEL = 2,    /* malformed or inconsistent model */
  SEQRT_NOT_FOUND = 3,        /* missing file, input, output, backend, key */
  SEQRT_UNSUPPORTED = 4,      /* valid but not supported here */
  SEQRT_OUT_OF_MEMORY = 5,
  SEQRT_LIMIT_EXCEEDED = 6, /* a configured resource limit was reached */
  SEQRT_IO_ERROR = 7,
  SEQRT_INTERNAL = 8, /* a bug in seqrt */
  /* The run stopped early: seqrt_session_cancel, or its deadline
   * (SEQRT_LIMIT_RUN_TIMEOUT_MS) passed. The session (and a stream's
   * state) is as before the call. */
  SEQRT_CANCELLED = 9,
  SEQRT_DEADLINE_EXCEEDED = 10
} seqrt_status;

/* The message of the calling thread's most recent failed call ("" when
 * none). Lent until that thread's next failing call. Thread-safe. */
SEQRT_API const char* seqrt_last_error_message(void);

/* "ok", "invalid argument", ...; "unknown status" for other values.
 * Thread-safe. */
SEQRT_API const char* seqrt_status_name(seqrt_status status);

/* The library's version, "MAJOR.MINOR.PATCH". Thread-safe. */
SEQRT_API const char* seqrt_version(void);

/* The library's ABI version (its SONAME number). Thread-safe. */
SEQRT_API int seqrt_abi_version(void);

/* ---- Element types ---------------------------------------------------- */

/* Values match the .seqrt format's and never change. */
typedef enum seqrt_dtype {
  SEQRT_DTYPE_UNDEFINED = 0,
  SEQRT_DTYPE_F32 = 1,
  SEQRT_DTYPE_F16 = 2,
  SEQRT_DTYPE_BF16 = 3,
  SEQRT_DTYPE_F64 = 4,
  SEQRT_DTYPE_I8 = 5,
  SEQRT_DTYPE_U8 = 6,
  SEQRT_DTYPE_I32 = 7,
  SEQRT_DTYPE_I64 = 8,
  SEQRT_DTYPE_BOOL = 9, /* one byte per element, 0 or 1 */
  /* 4-bit integers packed two a byte, element i in the low nibble of byte
   * i/2 when i is even (ONNX's layout): n elements take (n + 1) / 2 bytes. */
  SEQRT_DTYPE_I4 = 10,
  SEQRT_DTYPE_U4 = 11,
  /* The ONNX float8 formats, one byte each. */
  SEQRT_DTYPE_F8E4M3FN = 12,
  SEQRT_DTYPE_F8E4M3FNUZ = 13,
  SEQRT_DTYPE_F8E5M2 = 14,
  SEQRT_DTYPE_F8E5M2FNUZ = 15,
  /* ONNX FLOAT8E8M0, one byte each: code c is 2^(c - 127), 0xff NaN. */
  SEQRT_DTYPE_F8E8M0 = 16,
  /* ONNX FLOAT4E2M1 (sign, 2 exponent bits, 1 mantissa bit), packed two a
   * byte exactly as SEQRT_DTYPE_I4. */
  SEQRT_DTYPE_F4E2M1 = 17
} seqrt_dtype;

/* "f32", "f16", ...; "undefined" for values outside the enum. Thread-safe. */
SEQRT_API const char* seqrt_dtype_name(seqrt_dtype dtype);

/* Bytes per element; 0 for SEQRT_DTYPE_UNDEFINED, unknown values and the
 * packed SEQRT_DTYPE_I4/U4/F4E2M1 (n of them take (n + 1) / 2 bytes).
 * Thread-safe. */
SEQRT_API size_t seqrt_dtype_size(seqrt_dtype dtype);

/* ---- Handles ---------------------------------------------------------- */

typedef struct seqrt_tensor seqrt_tensor;
typedef struct seqrt_model seqrt_model;
typedef struct seqrt_session_options seqrt_session_options;
typedef struct seqrt_session seqrt_session;
typedef struct seqrt_stream seqrt_stream;
typedef struct seqrt_snapshot seqrt_snapshot;

/* ---- Tensors ---------------------------------------------------------- */

/* A dense row-major host tensor of `rank` dims. `data` holds `data_bytes`
 * bytes, which must equal the element count times seqrt_dtype_size(dtype)
 * (for I4/U4/F4E2M1: half the element count, rounded up);
 * they are copied, so the caller may free them on return. NULL `data` (with
 * `data_bytes` 0) gives a zero-filled tensor to fill through
 * seqrt_tensor_mutable_data. `dims` may be NULL when `rank` is 0 (a
 * scalar). Thread-safe. */
SEQRT_API seqrt_status seqrt_tensor_create(seqrt_dtype dtype,
                                           const int64_t* dims, size_t rank,
                                           const void* data, size_t data_bytes,
                                           seqrt_tensor** out);

/* Like seqrt_tensor_create, but with no copy: the tensor reads `data` in
 * place. The caller keeps `data` alive and unchanged until the tensor is
 * released and every run it was fed to has returned. `data` must be
 * aligned to the element size. Runs never write a borrowed tensor.
 * Thread-safe. */
SEQRT_API seqrt_status seqrt_tensor_borrow(seqrt_dtype dtype,
                                           const int64_t* dims, size_t rank,
                                           const void* data, size_t data_bytes,
                                           seqrt_tensor** out);

/* Releases a tensor (NULL is a no-op). Memory a run still uses stays alive
 * until that run ends. Not thread-safe for the same handle. */
SEQRT_API void seqrt_tensor_release(seqrt_tensor* tensor);

/* Element type, rank and dims (`*dims` lent: `rank` values, NULL for rank
 * 0). Thread-safe. */
SEQRT_API seqrt_status seqrt_tensor_dtype(const seqrt_tensor* tensor,
                                          seqrt_dtype* out);
SEQRT_API seqrt_status seqrt_tensor_shape(const seqrt_tensor* tensor,
                                          const int64_t** dims, size_t* rank);
/* Number of elements and bytes of data. Thread-safe. */
SEQRT_API seqrt_status seqrt_tensor_element_count(const seqrt_tensor* tensor,
                                                  int64_t* out);
SEQRT_API seqrt_status seqrt_tensor_byte_size(const seqrt_tensor* tensor,
                                              size_t* out);

/* The tensor's bytes, read-only and lent. For a borrowed tensor this is the
 * caller's own pointer. Thread-safe. */
SEQRT_API seqrt_status seqrt_tensor_data(const seqrt_tensor* tensor,
                                         const void** out);

/* Writable bytes of a tensor made by seqrt_tensor_create; any other tensor
 * (borrowed, or returned by a run) is read-only: SEQRT_INVALID_ARGUMENT.
 * Write only while no run uses the tensor. Not thread-safe. */
SEQRT_API seqrt_status seqrt_tensor_mutable_data(seqrt_tensor* tensor,
                                                 void** out);

/* ---- Models ----------------------------------------------------------- */

/* Loads and type-checks a model file: .seqrt (mapped, weights used in
 * place) or ONNX (external data read from beside it). The format is told
 * by content, then by extension. A missing file is SEQRT_NOT_FOUND naming
 * it. Thread-safe.
 * A mapped .seqrt file must not be truncated or rewritten in place while
 * the model or a session made from it is alive: touching a page that is
 * gone raises SIGBUS. Replace model files by renaming a new file over the
 * old one, or load with SEQRT_LOAD_COPY. */
SEQRT_API seqrt_status seqrt_model_load_file(const char* path,
                                             seqrt_model** out);

/* Flags of seqrt_model_load_file_with_flags, OR'ed. Values never change. */
typedef enum seqrt_load_flag {
  SEQRT_LOAD_DEFAULT = 0,
  /* Read a .seqrt file into memory instead of mapping it: the file may then
   * change or be removed as soon as the load returns, at the cost of the
   * file's size in memory. ONNX files are always read into memory. */
  SEQRT_LOAD_COPY = 1
} seqrt_load_flag;

/* seqrt_model_load_file with `flags` (seqrt_load_flag bits); an unknown
 * bit is SEQRT_INVALID_ARGUMENT. Thread-safe. */
SEQRT_API seqrt_status seqrt_model_load_file_with_flags(const char* path,
                                                        uint32_t flags,
                                                        seqrt_model** out);

/* Same from `size` bytes in memory (a .seqrt file or an ONNX ModelProto
 * without external data). The bytes are copied once, so the caller may free
 * them on return. Thread-safe. */
SEQRT_API seqrt_status seqrt_model_load_memory(const void* data, size_t size,
                                               seqrt_model** out);

/* Releases a model (NULL is a no-op). Sessions created from it stay valid.
 * Not thread-safe for the same handle. */
SEQRT_API void seqrt_model_release(seqrt_model* model);

/* The graph's name (lent). Thread-safe. */
SEQRT_API seqrt_status seqrt_model_name(const seqrt_model* model,
                                        const char** out);

/* Which side of the model a value is on. */
typedef enum seqrt_io_kind {
  SEQRT_IO_INPUT = 0,
  SEQRT_IO_OUTPUT = 1
} seqrt_io_kind;

/* Graph inputs (state inputs included) or outputs, in graph order.
 * Indices run from 0 to count - 1; a larger index is
 * SEQRT_INVALID_ARGUMENT. All thread-safe. */
SEQRT_API seqrt_status seqrt_model_io_count(const seqrt_model* model,
                                            seqrt_io_kind kind, size_t* out);
SEQRT_API seqrt_status seqrt_model_io_name(const seqrt_model* model,
                                           seqrt_io_kind kind, size_t index,
                                           const char** out);
SEQRT_API seqrt_status seqrt_model_io_dtype(const seqrt_model* model,
                                            seqrt_io_kind kind, size_t index,
                                            seqrt_dtype* out);
/* The rank; -1 when the model does not fix it. */
SEQRT_API seqrt_status seqrt_model_io_rank(const seqrt_model* model,
                                           seqrt_io_kind kind, size_t index,
                                           int64_t* out);
/* Dim `axis`: `*size` is its fixed size or -1; `*symbol` (lent) names a
 * symbolic dim ("batch", "seq") and is NULL for a fixed or unnamed one.
 * Either out-pointer may be NULL when not wanted, not both. */
SEQRT_API seqrt_status seqrt_model_io_dim(const seqrt_model* model,
                                          seqrt_io_kind kind, size_t index,
                                          size_t axis, int64_t* size,
                                          const char** symbol);

/* State pairs (past_* input, present_* output) in declaration order; the
 * names are lent. Thread-safe. */
SEQRT_API seqrt_status seqrt_model_state_pair_count(const seqrt_model* model,
                                                    size_t* out);
SEQRT_API seqrt_status seqrt_model_state_pair(const seqrt_model* model,
                                              size_t index,
                                              const char** input_name,
                                              const char** output_name);

/* Metadata strings: the value for `key` (SEQRT_NOT_FOUND when absent), or
 * the keys in sorted order by index. Lent. Thread-safe. */
SEQRT_API seqrt_status seqrt_model_metadata(const seqrt_model* model,
                                            const char* key,
                                            const char** value);
SEQRT_API seqrt_status seqrt_model_metadata_count(const seqrt_model* model,
                                                  size_t* out);
SEQRT_API seqrt_status seqrt_model_metadata_key(const seqrt_model* model,
                                                size_t index, const char** out);

/* Number of nodes (ops) in the model as loaded, before any optimisation.
 * Thread-safe. */
SEQRT_API seqrt_status seqrt_model_op_count(const seqrt_model* model,
                                            size_t* out);

/* ---- Session options --------------------------------------------------- */

/* Defaults: backend "cpu" when this build has it, else "reference"; device
 * 0; threads 0 (the backend's default); no dim bindings; optimise on.
 * An options object belongs to one thread at a time; sessions copy it. */
SEQRT_API seqrt_status
seqrt_session_options_create(seqrt_session_options** out);
SEQRT_API void seqrt_session_options_release(seqrt_session_options* options);

/* A backend name, e.g. "cpu" or "reference"; checked at session creation,
 * where an unknown name is SEQRT_NOT_FOUND listing the compiled ones. */
SEQRT_API seqrt_status seqrt_session_options_set_backend(
    seqrt_session_options* options, const char* backend);
/* The backend's device index (>= 0); the same as backend option "device".
 * The host backends have one device, 0; another index fails at session
 * creation with SEQRT_UNSUPPORTED, and an index the device backends do not
 * have with SEQRT_NOT_FOUND (Vulkan) or SEQRT_INVALID_ARGUMENT (CUDA). */
SEQRT_API seqrt_status seqrt_session_options_set_device_index(
    seqrt_session_options* options, int device_index);
/* One backend option, as text; setting a key again replaces its value:
 *   "device"        a device index (all backends; host ones have only 0)
 *   "fp16_weights"  1/0/true/false: fp32 MatMul/Gemm weights stored as
 *                   fp16 (vulkan)
 *   "forms"         auto, recurrent or chunked: the sequence ops' forms
 *                   (vulkan)
 *   "device_name"   a substring of the device's name (vulkan)
 *   "validation"    1/0: the Khronos validation layers (vulkan)
 * SEQRT_INVALID_ARGUMENT, with a message naming the key, for a key no
 * backend of this build takes or a malformed "device"/"fp16_weights"
 * value; a key the chosen backend does not take, or a value it refuses,
 * fails seqrt_session_create with SEQRT_INVALID_ARGUMENT naming it. The
 * backend's environment variables (SEQRT_VULKAN_*, SEQRT_CUDA_DEVICE)
 * override these where they are set. */
SEQRT_API seqrt_status seqrt_session_options_set_backend_option(
    seqrt_session_options* options, const char* key, const char* value);
/* Threads per run on the CPU backend (0: one per core or OMP_NUM_THREADS). */
SEQRT_API seqrt_status
seqrt_session_options_set_threads(seqrt_session_options* options, int threads);
/* Binds symbolic dim `name` to `size` (>= 0) for compilation, e.g. seq=1
 * for a decode session; binding a name again replaces its size. */
SEQRT_API seqrt_status seqrt_session_options_bind_dim(
    seqrt_session_options* options, const char* name, int64_t size);
/* Non-zero (the default) runs the graph passes (folding, fusions) before
 * compiling; 0 runs the graph exactly as given. */
SEQRT_API seqrt_status seqrt_session_options_set_optimize(
    seqrt_session_options* options, int optimize);
/* Tokens each KV cache of a stream holds (>= 0; 0, the default, lets the
 * cache grow by concatenation as the graph says). Above 0 the streams of
 * the session run the graph's fixed-capacity form: each cache is allocated
 * once and written in place, so a decode step costs its new tokens; a step
 * past the capacity fails with the stream unchanged. Session creation then
 * fails, saying why, for a graph without such a KV cache. */
SEQRT_API seqrt_status seqrt_session_options_set_kv_cache_capacity(
    seqrt_session_options* options, int64_t tokens);

/* Resource limits (graph/limits.h); reaching one is SEQRT_LIMIT_EXCEEDED
 * with a message naming the limit. Values never change. */
typedef enum seqrt_limit {
  SEQRT_LIMIT_MAX_TENSOR_BYTES = 0,    /* one tensor; default 16 GiB */
  SEQRT_LIMIT_MAX_TENSOR_ELEMENTS = 1, /* one tensor; default 2^34 */
  SEQRT_LIMIT_MAX_NODES = 2,           /* subgraphs included; default 10^6 */
  SEQRT_LIMIT_MAX_SUBGRAPH_DEPTH = 3,  /* default 16, at most 64 */
  /* Bytes of one run as the memory plan estimates them (arena, weights,
   * inputs and outputs): session creation fails above it, and so does a
   * run, before it allocates; what a run allocates for shapes computed at
   * run time counts on top, checked at each allocation. Default 0: no
   * budget. The two tensor limits are checked at each allocation too. */
  SEQRT_LIMIT_MEMORY_BUDGET = 4,
  /* Iterations of one Loop node in one run; default 2^31. */
  SEQRT_LIMIT_MAX_LOOP_ITERATIONS = 5,
  /* Milliseconds one run or stream step may take before it fails with
   * SEQRT_DEADLINE_EXCEEDED (checked between nodes and between Loop/Scan
   * iterations). Default 0: no deadline. */
  SEQRT_LIMIT_RUN_TIMEOUT_MS = 6
} seqrt_limit;

/* Sets one limit: >= 1 (the budget and the timeout >= 0); the element
 * count at most 2^48 and the depth at most 64, else
 * SEQRT_INVALID_ARGUMENT. */
SEQRT_API seqrt_status seqrt_session_options_set_limit(
    seqrt_session_options* options, seqrt_limit limit, int64_t value);

/* For tests of out-of-memory handling: makes the n-th host allocation of
 * tensor memory from now fail, once (1: the next one); 0 disarms. The
 * environment variable SEQRT_TEST_FAIL_ALLOC=N does the same from the
 * start of the process. Thread-safe. */
SEQRT_API void seqrt_testing_fail_host_allocation(int64_t nth);

/* ---- Sessions ---------------------------------------------------------- */

/* Compiles `model` for the options' backend (NULL options: the defaults).
 * The session keeps what it needs of the model, which may be released
 * afterwards. Thread-safe (several sessions may be created from one model
 * at once). */
SEQRT_API seqrt_status
seqrt_session_create(const seqrt_model* model,
                     const seqrt_session_options* options, seqrt_session** out);

/* Releases a session (NULL is a no-op); streams on it keep it alive until
 * they are released. Not thread-safe for the same handle: no run may be
 * in flight on it. */
SEQRT_API void seqrt_session_release(seqrt_session* session);

/* One run of the compiled plan. Feeds `input_count` tensors by input name;
 * writes one new owned tensor per requested output name into `outputs`.
 * Unfed state inputs start from their initial value. Unknown input or
 * output names, unfed inputs and wrong dtypes or shapes are errors naming
 * them; on failure no output is written. Fed tensors are never modified.
 * Thread-safe: many threads may run one session at once. */
SEQRT_API seqrt_status seqrt_session_run(const seqrt_session* session,
                                         const char* const* input_names,
                                         const seqrt_tensor* const* inputs,
                                         size_t input_count,
                                         const char* const* output_names,
                                         seqrt_tensor** outputs,
                                         size_t output_count);

/* Stops every run in flight on `session` (seqrt_session_run and stream
 * steps) at its next check, between nodes or Loop/Scan iterations: each
 * fails with SEQRT_CANCELLED and leaves the session and the stream's state
 * as before it. Runs that start after the call are not affected.
 * Thread-safe: call it from any thread while others run. */
SEQRT_API seqrt_status seqrt_session_cancel(const seqrt_session* session);

/* The backend's name ("cpu") and its device's ("host CPU"), lent.
 * Thread-safe. */
SEQRT_API seqrt_status seqrt_session_backend_name(const seqrt_session* session,
                                                  const char** out);
SEQRT_API seqrt_status seqrt_session_device_name(const seqrt_session* session,
                                                 const char** out);

/* The memory plan of the session's (optimised) graph for one binding of its
 * symbolic dims: `dim_names[i]` = `dim_sizes[i]`, on top of the options'
 * bindings. `*peak_arena_bytes` is the arena a run needs, `*naive_bytes`
 * the sum of all transient tensors. Thread-safe. */
SEQRT_API seqrt_status seqrt_session_memory_plan(const seqrt_session* session,
                                                 const char* const* dim_names,
                                                 const int64_t* dim_sizes,
                                                 size_t dim_count,
                                                 int64_t* peak_arena_bytes,
                                                 int64_t* naive_bytes);

/* ---- Streams ----------------------------------------------------------- */

/* The state of one sequence on `session` (whose model has state pairs):
 * each run feeds the held past_* state and keeps the present_* outputs as
 * the next state, inside the runtime. The stream keeps the session alive.
 * Thread-safe; the new stream belongs to one thread at a time. */
SEQRT_API seqrt_status seqrt_stream_create(const seqrt_session* session,
                                           seqrt_stream** out);
SEQRT_API void seqrt_stream_release(seqrt_stream* stream);

/* Runs a block of positions (a prompt) with the held state, as
 * seqrt_session_run does. State outputs are not returned: they become the
 * stream's state (asking for one by name is SEQRT_NOT_FOUND). Bad feeds
 * leave the state unchanged; a run that fails later resets the stream to
 * its initial state and says so. Not thread-safe for the same stream. */
SEQRT_API seqrt_status seqrt_stream_prefill(seqrt_stream* stream,
                                            const char* const* input_names,
                                            const seqrt_tensor* const* inputs,
                                            size_t input_count,
                                            const char* const* output_names,
                                            seqrt_tensor** outputs,
                                            size_t output_count);

/* One decode step: the same run as prefill, fed one position. Which axis
 * is the sequence axis is the model's own business (seqrt cannot tell it in
 * general), so the feeds' shapes are not checked beyond the model's types.
 * Not thread-safe for the same stream. */
SEQRT_API seqrt_status seqrt_stream_step(seqrt_stream* stream,
                                         const char* const* input_names,
                                         const seqrt_tensor* const* inputs,
                                         size_t input_count,
                                         const char* const* output_names,
                                         seqrt_tensor** outputs,
                                         size_t output_count);

/* A copy of the held state, as an owned, immutable snapshot (cheap: tensors
 * are shared, not copied, and the stream's later runs do not change it).
 * Not thread-safe for the same stream. */
SEQRT_API seqrt_status seqrt_stream_snapshot(const seqrt_stream* stream,
                                             seqrt_snapshot** out);
/* Makes a snapshot the stream's state again. The snapshot may come from
 * another stream over a session of the same model. Not thread-safe for the
 * same stream. */
SEQRT_API seqrt_status seqrt_stream_restore(seqrt_stream* stream,
                                            const seqrt_snapshot* snapshot);
/* Back to the initial state. Not thread-safe for the same stream. */
SEQRT_API seqrt_status seqrt_stream_reset(seqrt_stream* stream);
SEQRT_API void seqrt_snapshot_release(seqrt_snapshot* snapshot);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SEQRT_SEQRT_H_ */
