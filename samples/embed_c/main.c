/* embed_c MODEL [BACKEND]: seqrt from C. Loads a stateful model, prints its
 * inputs and outputs, runs it once over a whole sequence, then decodes the
 * same sequence through a stream (a prefill of the first positions, then
 * one step per position), printing an output value per step and checking
 * that each step equals the whole-sequence run.
 *
 * The model needs one non-state f32 input and one non-state output, each
 * with exactly one symbolic dim (the sequence axis) and all others fixed,
 * as samples/models/make_tiny_recurrent writes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <seqrt/seqrt.h>

enum { kPrompt = 4, kSteps = 6, kTotal = kPrompt + kSteps, kMaxRank = 8 };

/* Prints the failed call's message and leaves with `code` 1. */
#define CHECK(call)                                                           \
  do {                                                                        \
    seqrt_status status_ = (call);                                            \
    if (status_ != SEQRT_OK) {                                                \
      fprintf(stderr, "embed_c: error: %s: %s\n", seqrt_status_name(status_), \
              seqrt_last_error_message());                                    \
      exit(1);                                                                \
    }                                                                         \
  } while (0)

/* A non-state input or output: its name, fixed dims and sequence axis. */
typedef struct {
  const char* name;
  size_t rank;
  int64_t dims[kMaxRank];
  size_t seq_axis;
} Port;

static int is_state(const seqrt_model* model, const char* name) {
  size_t pairs = 0;
  CHECK(seqrt_model_state_pair_count(model, &pairs));
  for (size_t i = 0; i < pairs; ++i) {
    const char *past = NULL, *present = NULL;
    CHECK(seqrt_model_state_pair(model, i, &past, &present));
    if (strcmp(name, past) == 0 || strcmp(name, present) == 0) return 1;
  }
  return 0;
}

/* Prints every input or output as "name: dtype (dims)"; returns the first
 * non-state one, which must have exactly one symbolic dim. */
static Port describe(const seqrt_model* model, seqrt_io_kind kind) {
  const char* what = kind == SEQRT_IO_INPUT ? "input" : "output";
  Port found = {0};
  size_t count = 0;
  CHECK(seqrt_model_io_count(model, kind, &count));
  for (size_t i = 0; i < count; ++i) {
    Port port = {0};
    seqrt_dtype dtype;
    int64_t rank = 0;
    int symbols = 0;
    CHECK(seqrt_model_io_name(model, kind, i, &port.name));
    CHECK(seqrt_model_io_dtype(model, kind, i, &dtype));
    CHECK(seqrt_model_io_rank(model, kind, i, &rank));
    printf("%s %s: %s (", what, port.name, seqrt_dtype_name(dtype));
    for (int64_t axis = 0; axis < rank && axis < kMaxRank; ++axis) {
      const char* symbol = NULL;
      CHECK(seqrt_model_io_dim(model, kind, i, (size_t)axis, &port.dims[axis],
                               &symbol));
      if (symbol)
        printf("%s%s", axis > 0 ? "," : "", symbol);
      else
        printf("%s%lld", axis > 0 ? "," : "", (long long)port.dims[axis]);
      if (port.dims[axis] < 0) port.seq_axis = (size_t)axis, ++symbols;
    }
    int state = is_state(model, port.name);
    printf(")%s\n", state ? " [state]" : "");
    if (found.name != NULL || state) continue;
    if (symbols != 1 || rank > kMaxRank) {
      fprintf(stderr,
              "embed_c: error: %s '%s' needs exactly one symbolic "
              "(sequence) dim and rank <= %d\n",
              what, port.name, kMaxRank);
      exit(1);
    }
    port.rank = (size_t)rank;
    found = port;
  }
  if (found.name == NULL) {
    fprintf(stderr, "embed_c: error: the model has no non-state %s\n", what);
    exit(1);
  }
  return found;
}

/* Element counts before and after the sequence axis. */
static void split(const Port* port, int64_t* outer, int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (size_t axis = 0; axis < port->rank; ++axis) {
    if (axis < port->seq_axis) *outer *= port->dims[axis];
    if (axis > port->seq_axis) *inner *= port->dims[axis];
  }
}

/* Positions [begin, end) of a deterministic input sequence, as an owned
 * tensor (seqrt_tensor_create copies the values). */
static seqrt_tensor* make_input(const Port* port, int begin, int end) {
  int64_t outer, inner, length = end - begin;
  split(port, &outer, &inner);
  float* values = malloc(sizeof(float) * (size_t)(outer * length * inner));
  if (values == NULL) {
    fprintf(stderr, "embed_c: error: out of memory\n");
    exit(1);
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t t = 0; t < length; ++t)
      for (int64_t i = 0; i < inner; ++i)
        values[(o * length + t) * inner + i] = (float)sin(
            0.37 * (double)(begin + t) + 0.11 * (double)i + 0.5 * (double)o);
  int64_t dims[kMaxRank];
  memcpy(dims, port->dims, sizeof(dims));
  dims[port->seq_axis] = length;
  seqrt_tensor* tensor = NULL;
  CHECK(seqrt_tensor_create(SEQRT_DTYPE_F32, dims, port->rank, values,
                            sizeof(float) * (size_t)(outer * length * inner),
                            &tensor));
  free(values);
  return tensor;
}

/* Element (o = 0, position t, i = 0) of an f32 output. */
static float first_at(const Port* port, const seqrt_tensor* tensor, int64_t t) {
  const void* data = NULL;
  int64_t outer, inner;
  CHECK(seqrt_tensor_data(tensor, &data));
  split(port, &outer, &inner);
  return ((const float*)data)[t * inner];
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: embed_c MODEL [BACKEND]\n");
    return 2;
  }
  printf("seqrt %s (headers %s, ABI %d)\n", seqrt_version(),
         SEQRT_VERSION_STRING, seqrt_abi_version());
  seqrt_model* model = NULL;
  CHECK(seqrt_model_load_file(argv[1], &model));
  const char* name = NULL;
  size_t ops = 0;
  CHECK(seqrt_model_name(model, &name));
  CHECK(seqrt_model_op_count(model, &ops));
  printf("model %s: %zu ops\n", name, ops);
  Port in = describe(model, SEQRT_IO_INPUT);
  Port out = describe(model, SEQRT_IO_OUTPUT);

  seqrt_session_options* options = NULL;
  CHECK(seqrt_session_options_create(&options));
  if (argc == 3) CHECK(seqrt_session_options_set_backend(options, argv[2]));
  seqrt_session* session = NULL;
  CHECK(seqrt_session_create(model, options, &session));
  const char *backend = NULL, *device = NULL;
  CHECK(seqrt_session_backend_name(session, &backend));
  CHECK(seqrt_session_device_name(session, &device));
  printf("backend %s on %s\n", backend, device);

  /* One run over the whole sequence: the reference for the steps. */
  seqrt_tensor* whole_input = make_input(&in, 0, kTotal);
  const seqrt_tensor* feeds[1] = {whole_input};
  seqrt_tensor* whole = NULL;
  CHECK(seqrt_session_run(session, &in.name, feeds, 1, &out.name, &whole, 1));
  printf("run: %d positions, %s[last] = %.6f\n", kTotal, out.name,
         first_at(&out, whole, kTotal - 1));

  seqrt_stream* stream = NULL;
  CHECK(seqrt_stream_create(session, &stream));
  seqrt_tensor* prompt = make_input(&in, 0, kPrompt);
  feeds[0] = prompt;
  seqrt_tensor* prefilled = NULL;
  CHECK(seqrt_stream_prefill(stream, &in.name, feeds, 1, &out.name, &prefilled,
                             1));
  printf("prefill: %d positions, %s[last] = %.6f\n", kPrompt, out.name,
         first_at(&out, prefilled, kPrompt - 1));
  int mismatches = 0;
  for (int t = kPrompt; t < kTotal; ++t) {
    seqrt_tensor* position = make_input(&in, t, t + 1);
    feeds[0] = position;
    seqrt_tensor* stepped = NULL;
    CHECK(
        seqrt_stream_step(stream, &in.name, feeds, 1, &out.name, &stepped, 1));
    float got = first_at(&out, stepped, 0);
    float want = first_at(&out, whole, t);
    int same = fabsf(got - want) <= 1e-4f * (1.0f + fabsf(want));
    mismatches += !same;
    printf("step %d: %s = %.6f%s\n", t, out.name, got,
           same ? "" : " (differs from the whole-sequence run)");
    seqrt_tensor_release(stepped);
    seqrt_tensor_release(position);
  }
  printf("%s\n", mismatches == 0 ? "stream matches the whole-sequence run"
                                 : "stream DIFFERS from the whole run");

  seqrt_tensor_release(prefilled);
  seqrt_tensor_release(prompt);
  seqrt_stream_release(stream);
  seqrt_tensor_release(whole);
  seqrt_tensor_release(whole_input);
  seqrt_session_release(session);
  seqrt_session_options_release(options);
  seqrt_model_release(model);
  return mismatches == 0 ? 0 : 1;
}
