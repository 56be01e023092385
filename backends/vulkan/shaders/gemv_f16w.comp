#version 450
// B (the weight) stored as fp16, read through 16-bit storage and widened;
// everything else as in gemv.comp.
#extension GL_EXT_shader_16bit_storage : require
#include "common.glsl"
#define WEIGHT_T float16_t
#include "gemv_body.glsl"
