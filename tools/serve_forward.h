// `seqrt serve ...` is served by the Python package seqrt.serve (Ray
// Serve); this forwards the command line to it.
#pragma once

namespace seqrt {

// Replaces this process with `$SEQRT_PYTHON -m seqrt.serve ARGS...`
// (SEQRT_PYTHON defaults to python3 on PATH); `argv` starts at "serve".
// Returns only when the Python could not be started, with the exit code
// after printing why.
int forward_to_python_serve(int argc, char** argv);

}  // namespace seqrt
