#version 450
// Integer Add, Sub, Mul, Div, Max, Min, Mod (codes 9 and 10: fmod 0 and 1)
// with numpy broadcasting, and Neg (code 8), for the shape arithmetic of
// exported models. TYPE 1: i32; TYPE 2: i64 as (low, high)
// words, exact modulo 2^64 without the optional shaderInt64 feature.
// Division truncates toward zero; a zero divisor gives 0 (kernels refuse
// divisors that could be zero). Op codes:
// kernels/elementwise.cc kBinaryOps.
#include "common.glsl"
#include "flat_index.glsl"
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint TYPE = 1;
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer B { uint b[]; };
layout(std430, binding = 2) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push {
  uint count;
  uint rank;
  uint dims[MAX_RANK];
  uint a_strides[MAX_RANK];
  uint b_strides[MAX_RANK];
} p;

bool negative(uvec2 v) { return int(v.y) < 0; }

uvec2 negate(uvec2 v) {
  uint carry;
  uint lo = uaddCarry(~v.x, 1u, carry);
  return uvec2(lo, ~v.y + carry);
}

bool less(uvec2 u, uvec2 v) {
  if (u.y != v.y) return int(u.y) < int(v.y);
  return u.x < v.x;
}

// |u| / |v| by shift and subtract, one quotient bit per step.
uvec2 divide_unsigned(uvec2 u, uvec2 v) {
  uvec2 q = uvec2(0), r = uvec2(0);
  for (int bit = 63; bit >= 0; --bit) {
    r = uvec2(r.x << 1, (r.y << 1) | (r.x >> 31));
    uint word = bit >= 32 ? u.y : u.x;
    r.x |= (word >> (bit & 31)) & 1u;
    if (r.y > v.y || (r.y == v.y && r.x >= v.x)) {
      uint borrow;
      r.x = usubBorrow(r.x, v.x, borrow);
      r.y = r.y - v.y - borrow;
      if (bit >= 32) q.y |= 1u << (bit - 32); else q.x |= 1u << bit;
    }
  }
  return q;
}

uvec2 apply(uvec2 u, uvec2 v) {
  uint carry;
  switch (OP) {
    case 0: {
      uint lo = uaddCarry(u.x, v.x, carry);
      return uvec2(lo, u.y + v.y + carry);
    }
    case 1: {
      uint lo = usubBorrow(u.x, v.x, carry);
      return uvec2(lo, u.y - v.y - carry);
    }
    case 2: {
      uint hi, lo;
      umulExtended(u.x, v.x, hi, lo);
      return uvec2(lo, hi + u.x * v.y + u.y * v.x);
    }
    case 3: {
      if (v == uvec2(0)) return uvec2(0);
      uvec2 q = divide_unsigned(negative(u) ? negate(u) : u,
                                negative(v) ? negate(v) : v);
      return negative(u) != negative(v) ? negate(q) : q;
    }
    case 5: return less(u, v) ? v : u;
    case 6: return less(u, v) ? u : v;
    case 8: return negate(u);  // Neg (b is a again)
    case 9:    // Mod, fmod=0: the remainder takes the divisor's sign
    case 10: {  // Mod, fmod=1: the remainder takes the dividend's sign
      if (v == uvec2(0)) return uvec2(0);
      uvec2 av = negative(v) ? negate(v) : v;
      uvec2 q = divide_unsigned(negative(u) ? negate(u) : u, av);
      // |r| = |u| - q |v|, signed like u
      uint hi, lo;
      umulExtended(q.x, av.x, hi, lo);
      uvec2 qv = uvec2(lo, hi + q.x * av.y + q.y * av.x);
      uvec2 au = negative(u) ? negate(u) : u;
      uint borrow;
      uint rlo = usubBorrow(au.x, qv.x, borrow);
      uvec2 r = uvec2(rlo, au.y - qv.y - borrow);
      if (negative(u)) r = negate(r);
      if (OP == 9 && r != uvec2(0) && negative(r) != negative(v)) {
        uint c;
        uint sum_lo = uaddCarry(r.x, v.x, c);
        r = uvec2(sum_lo, r.y + v.y + c);
      }
      return r;
    }
  }
  return uvec2(0);
}

uvec2 load(bool from_a, uint i) {
  if (TYPE == 2) return from_a ? uvec2(a[2 * i], a[2 * i + 1])
                               : uvec2(b[2 * i], b[2 * i + 1]);
  uint w = from_a ? a[i] : b[i];
  return uvec2(w, int(w) < 0 ? 0xffffffffu : 0u);
}

void main() {
  uint i = flat_index();
  if (i >= p.count) return;
  uint rest = i, ia = 0, ib = 0;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint c = rest % p.dims[d];
    rest /= p.dims[d];
    ia += c * p.a_strides[d];
    ib += c * p.b_strides[d];
  }
  uvec2 r = apply(load(true, ia), load(false, ib));
  if (TYPE == 2) {
    y[2 * i] = r.x;
    y[2 * i + 1] = r.y;
  } else {
    y[i] = r.x;  // i32 results wrap as the reference's do
  }
}
