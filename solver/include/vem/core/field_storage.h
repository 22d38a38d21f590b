// Field storage precision of the FDTD engines (issue 16): how the E and H arrays are kept in
// memory. The arithmetic is float32 in every case; only the stored value is narrowed.
//  float32  IEEE binary32 (the default, 4 bytes a sample).
//  float16  IEEE binary16 (2 bytes): 11 significant bits (relative step 2^-11 = 4.9e-4 after
//           rounding), normal range 6.1e-5 .. 65504, subnormals down to 6.0e-8; larger values
//           become infinite.
//  bfloat16 the upper half of binary32 (2 bytes): float32's range, 8 significant bits (relative
//           step 2^-8 = 3.9e-3 after rounding).
// Every store rounds to nearest, ties to even (the CUDA conversions __float2half_rn and
// __float2bfloat16_rn). The CPU engine keeps float arrays but rounds each stored value with the
// functions below, so the two engines compute the same numbers (test_fdtd_cpu_cuda_agreement);
// the CUDA engine stores 2-byte elements and moves half the field bytes.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace vem {

enum class FieldStorage { float32, float16, bfloat16 };

const char* field_storage_name(FieldStorage s);                // "float32", "float16", "bfloat16"
FieldStorage field_storage_from_name(const std::string& name);  // throws Error naming the choices
inline int field_storage_bytes(FieldStorage s) { return s == FieldStorage::float32 ? 4 : 2; }
// Float bit patterns (of all 2^32) for which round_to_float16 / round_to_bfloat16 (s) differ from
// the CUDA conversion (__float2half_rn / __float2bfloat16_rn and back), NaNs compared as NaN;
// *first gets the first such pattern in hex. CUDA builds with a usable device only (throws
// otherwise). A self-check of the CPU engine's emulation of the 2-byte storages.
std::uint64_t field_storage_rounding_mismatches(FieldStorage s, std::string* first = nullptr);

#if defined(__CUDACC__)
#define VEM_STORAGE_HD __host__ __device__
#else
#define VEM_STORAGE_HD
#endif

VEM_STORAGE_HD inline std::uint32_t float_bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}
VEM_STORAGE_HD inline float bits_float(std::uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

// x rounded to the nearest binary16 value (ties to even), returned as a float (exact: every
// binary16 value is a binary32 value). NaN stays NaN; |x| >= 65520 becomes +-infinity. Host and
// device (field_storage_rounding_mismatches checks it against the CUDA conversion for every float).
VEM_STORAGE_HD inline float round_to_float16(float x) {
  const std::uint32_t u = float_bits(x);
  const std::uint32_t sign = u & 0x80000000u, a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return x;                           // infinity, NaN
  if (a >= 0x477ff000u) return bits_float(sign | 0x7f800000u);  // 65520 and above: infinity
  if (a < 0x38800000u) {
    // Below 2^-14: binary16 subnormals, multiples of 2^-24. |x| + 1/2 lies in [1/2, 1), where the
    // float step is 2^-24, so the addition rounds |x| to a multiple of 2^-24 (to nearest, ties to
    // even) and the subtraction is exact.
    const float r = (bits_float(a) + 0.5f) - 0.5f;
    return bits_float(sign | float_bits(r));
  }
  // Normal: keep 10 fraction bits of binary32's 23 (a carry into the exponent is correct).
  return bits_float(sign | ((a + 0x0fffu + ((a >> 13) & 1u)) & ~0x1fffu));
}

// x rounded to the nearest bfloat16 value (ties to even), as a float. NaN stays NaN; values that
// round past the largest finite bfloat16 become +-infinity.
VEM_STORAGE_HD inline float round_to_bfloat16(float x) {
  const std::uint32_t u = float_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return x;  // NaN
  return bits_float((u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u);
}

VEM_STORAGE_HD inline float round_to_storage(float x, FieldStorage s) {
  switch (s) {
    case FieldStorage::float16: return round_to_float16(x);
    case FieldStorage::bfloat16: return round_to_bfloat16(x);
    default: return x;
  }
}

}  // namespace vem
