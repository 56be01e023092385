#version 450
#include "common.glsl"
#define WEIGHT_T float
#include "gemv_body.glsl"
