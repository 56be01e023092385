// A test hook that makes a host allocation fail, so that tests can drive the
// out-of-memory paths (Session, Stream, the C API, the CLI) on any machine.
// Every host allocation of tensor storage goes through it: Tensor::allocate
// (constants, node outputs, the CPU backend's arenas) and the buffers of the
// host-memory backends. Off unless armed; thread-safe.
//
// The CLI and other processes arm it from the environment:
// SEQRT_TEST_FAIL_ALLOC=N makes the N-th host allocation of the process fail.
#pragma once

#include <cstdint>

namespace seqrt {

// Makes the n-th host allocation from now fail (1: the next one), once;
// 0 disarms. Replaces any earlier setting, the environment's included.
void fail_host_allocation(int64_t nth);

// Counts one host allocation: true when it is the one armed to fail.
bool host_allocation_fails();

}  // namespace seqrt
