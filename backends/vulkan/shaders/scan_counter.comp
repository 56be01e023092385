#version 450
// The step counter of a Scan that runs as a loop (backends/vulkan/scan.cc):
// the last dispatch of each step moves it on to the next.
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Counter { uint step_index; };

void main() { step_index += 1u; }
