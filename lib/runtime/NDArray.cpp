//===- NDArray.cpp - Host arrays -------------------------------------------===//
#include "tessera/runtime/NDArray.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <sstream>

#include "tessera/support/Error.h"
#include "tessera/support/Half.h"
#include "tessera/support/HostMemory.h"

namespace tessera::runtime {

using ir::DataType;
using ir::TypeCode;

namespace {

std::string shape_str(DataType dtype, const std::vector<int64_t> &shape) {
  std::string s = dtype.str() + "[";
  for (size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + "]";
}

}  // namespace

int64_t NDArray::checked_numel(DataType dtype, const std::vector<int64_t> &shape) {
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] < 0)
      throw UserError("array dimension " + std::to_string(d) + " is negative: " + std::to_string(shape[d]));
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  int64_t n = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (__builtin_mul_overflow(n, shape[d], &n))
      throw UserError("an array of " + shape_str(dtype, shape) + " has more elements than a 64-bit count holds");
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(n, int64_t(dtype.bytes()), &bytes))
    throw UserError("an array of " + shape_str(dtype, shape) + " has more bytes than a 64-bit count holds");
  return n;
}

void NDArray::check_fits(double bytes, const std::string &what) {
  // Small arrays are not worth reading /proc/meminfo for.
  if (bytes < double(256 << 20)) return;
  const HostMemory m = host_memory();
  if (m.available > 0 && bytes > m.available) throw UserError(needs_memory_message(what, bytes, m));
}

NDArray::NDArray(DataType dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
  if (dtype.lanes() != 1 || dtype.is_handle() || dtype.is_void())
    throw UserError("cannot make an array of " + dtype.str());
  numel_ = checked_numel(dtype, shape_);
  const size_t bytes = static_cast<size_t>(numel_) * dtype.bytes();
  check_fits(double(bytes), "an array of " + type_str());
  try {
    bytes_.assign(bytes, 0);
  } catch (const std::bad_alloc &) {
    throw UserError(needs_memory_message("an array of " + type_str(), double(bytes), host_memory()) +
                    " (the allocation failed)");
  }
}

NDArray NDArray::wrap(DataType dtype, std::vector<int64_t> shape, void *data) {
  NDArray a(dtype, {});  // checks the dtype
  a.numel_ = checked_numel(dtype, shape);
  a.shape_ = std::move(shape);
  a.bytes_.clear();
  a.external_bytes_ = static_cast<size_t>(a.numel_) * dtype.bytes();
  if (!data && a.external_bytes_ > 0) throw UserError("cannot wrap a null pointer as an array of " + dtype.str());
  a.external_ = static_cast<uint8_t *>(data);
  return a;
}

static void check_flat(const NDArray &a, int64_t flat) {
  if (flat < 0 || flat >= a.numel())
    throw UserError("element " + std::to_string(flat) + " is out of range for " + a.type_str());
}

double NDArray::get(int64_t flat) const {
  check_flat(*this, flat);
  const uint8_t *p = data() + flat * dtype_.bytes();
  auto rd = [p]<typename T>(T) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  };
  switch (dtype_.code()) {
    case TypeCode::Bool: return *p != 0;
    case TypeCode::BFloat: return bfloat16_bits_to_float(rd(uint16_t{}));
    case TypeCode::Float:
      if (dtype_.bits() == 16) return half_bits_to_float(rd(uint16_t{}));
      if (dtype_.bits() == 32) return rd(float{});
      return rd(double{});
    case TypeCode::UInt:
      if (dtype_.bits() == 64) return static_cast<double>(rd(uint64_t{}));
      return static_cast<double>(get_int(flat));
    default: return static_cast<double>(get_int(flat));
  }
}

int64_t NDArray::get_int(int64_t flat) const {
  check_flat(*this, flat);
  if (dtype_.is_float()) return static_cast<int64_t>(std::trunc(get(flat)));
  const uint8_t *p = data() + flat * dtype_.bytes();
  if (dtype_.is_bool()) return *p != 0;
  bool s = dtype_.is_int();
  switch (dtype_.bits()) {
    case 8: return s ? static_cast<int8_t>(*p) : *p;
    case 16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return s ? static_cast<int16_t>(v) : v;
    }
    case 32: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return s ? static_cast<int32_t>(v) : static_cast<int64_t>(v);
    }
    default: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

void NDArray::set_int(int64_t flat, int64_t v) {
  check_flat(*this, flat);
  if (dtype_.is_float()) {
    set(flat, static_cast<double>(v));
    return;
  }
  uint8_t *p = data() + flat * dtype_.bytes();
  if (dtype_.is_bool()) {
    *p = v != 0;
    return;
  }
  // Little-endian: the low bytes are the wrapped value.
  std::memcpy(p, &v, dtype_.bytes());
}

void NDArray::set(int64_t flat, double v) {
  check_flat(*this, flat);
  uint8_t *p = data() + flat * dtype_.bytes();
  if (dtype_.is_bool()) {
    *p = v != 0;
    return;
  }
  if (dtype_.is_bfloat16()) {
    uint16_t h = float_to_bfloat16_bits(static_cast<float>(v));
    std::memcpy(p, &h, 2);
    return;
  }
  if (dtype_.is_float()) {
    if (dtype_.bits() == 16) {
      uint16_t h = float_to_half_bits(static_cast<float>(v));
      std::memcpy(p, &h, 2);
    } else if (dtype_.bits() == 32) {
      float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
    } else {
      std::memcpy(p, &v, 8);
    }
    return;
  }
  // Integers: truncate toward zero (NaN -> 0, beyond 64 bits saturates), then wrap.
  if (std::isnan(v)) v = 0;
  v = std::trunc(v);
  int64_t i;
  if (v >= 0x1p64)
    i = -1;
  else if (v >= 0x1p63)
    i = static_cast<int64_t>(static_cast<uint64_t>(v));
  else if (v < -0x1p63)
    i = std::numeric_limits<int64_t>::min();
  else
    i = static_cast<int64_t>(v);
  set_int(flat, i);
}

void NDArray::fill_random(std::mt19937_64 &rng) {
  bool any_nonzero = false;
  for (int64_t i = 0; i < numel_; ++i) {
    if (dtype_.is_float()) {
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      set(i, u(rng));
    } else if (dtype_.is_bool()) {
      set_int(i, static_cast<int64_t>(rng() & 1));
    } else if (dtype_.is_int()) {
      set_int(i, static_cast<int64_t>(rng() % 16) - 8);
    } else {
      set_int(i, static_cast<int64_t>(rng() % 16));
    }
    any_nonzero |= get(i) != 0;
  }
  if (numel_ > 0 && !any_nonzero) set(0, 1.0);
}

void NDArray::fill_random_bits(std::mt19937_64 &rng) {
  for (size_t i = 0; i < nbytes(); ++i) data()[i] = static_cast<uint8_t>(rng() >> 56);
}

void NDArray::fill_random_bfloat16_halves(std::mt19937_64 &rng) {
  if (dtype_.bits() < 16) throw UserError("bfloat16 halves do not fit elements of " + dtype_.str());
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (size_t i = 0; i + 1 < nbytes(); i += 2) {
    uint16_t h = float_to_bfloat16_bits(u(rng));
    std::memcpy(data() + i, &h, 2);
  }
}

std::string NDArray::type_str() const {
  std::ostringstream os;
  os << dtype_.str() << "[";
  for (size_t d = 0; d < shape_.size(); ++d) os << (d ? ", " : "") << shape_[d];
  os << "]";
  return os.str();
}

std::string NDArray::summary(const std::string &name) const {
  double sq = 0, mx = 0, sum = 0;
  for (int64_t i = 0; i < numel_; ++i) {
    double v = get(i);
    sq += v * v;
    sum += v;
    double a = std::fabs(v);
    if (a > mx || std::isnan(a)) mx = std::isnan(mx) ? mx : a;
  }
  double mean = numel_ ? sum / static_cast<double>(numel_) : 0.0;
  char buf[128];
  std::snprintf(buf, sizeof(buf), " l2=%.6g max=%.6g mean=%.6g", std::sqrt(sq), mx, mean);
  return name + " " + type_str() + buf;
}

static void check_same_shape(const NDArray &a, const NDArray &b, const char *what) {
  if (a.shape() != b.shape())
    throw UserError(std::string(what) + ": shapes differ: " + a.type_str() + " vs " + b.type_str());
}

double max_rel_error(const NDArray &a, const NDArray &b) {
  check_same_shape(a, b, "max_rel_error");
  double bmax = 0;
  for (int64_t i = 0; i < b.numel(); ++i) {
    double v = std::fabs(b.get(i));
    if (std::isfinite(v) && v > bmax) bmax = v;
  }
  double floor = std::max(1e-6 * bmax, std::numeric_limits<double>::min());
  double worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.get(i), y = b.get(i);
    if (std::isnan(x) && std::isnan(y)) continue;
    if (x == y) continue;  // also equal infinities
    double err = std::fabs(x - y) / std::max(std::fabs(y), floor);
    if (std::isnan(err)) err = std::numeric_limits<double>::infinity();
    worst = std::max(worst, err);
  }
  return worst;
}

bool allclose(const NDArray &a, const NDArray &b, double rtol, double atol) {
  if (a.shape() != b.shape()) return false;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.get(i), y = b.get(i);
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) && std::isnan(y)) continue;
      return false;
    }
    if (x == y) continue;
    if (!(std::fabs(x - y) <= atol + rtol * std::fabs(y))) return false;
  }
  return true;
}

std::vector<NDArray *> pointers_to(std::vector<NDArray> &arrays) {
  std::vector<NDArray *> out;
  out.reserve(arrays.size());
  for (NDArray &a : arrays) out.push_back(&a);
  return out;
}

}  // namespace tessera::runtime
