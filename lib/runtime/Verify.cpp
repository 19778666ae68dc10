//===- Verify.cpp - Checking results against a wide reference --------------===//
#include "tessera/runtime/Verify.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <thread>

#include "tessera/ir/AccessRegions.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/support/Error.h"
#include "tessera/support/Half.h"

namespace tessera::runtime {

namespace {

/// Standard deviations of the modelled rounding error an element may be off by.
constexpr double kSigmas = 6;

double unit_roundoff_of(ir::DataType t) {
  if (t.is_bfloat16()) return std::ldexp(1.0, -8);
  if (t.bits() == 16) return std::ldexp(1.0, -11);
  if (t.bits() == 32) return std::ldexp(1.0, -24);
  return std::ldexp(1.0, -53);
}

double smallest_subnormal(ir::DataType t) {
  if (t.is_bfloat16()) return std::ldexp(1.0, -133);
  if (t.bits() == 16) return std::ldexp(1.0, -24);
  if (t.bits() == 32) return std::ldexp(1.0, -149);
  return std::numeric_limits<double>::denorm_min();
}

/// Reads element i of an array of any dtype as double, without the per-call
/// dtype dispatch of NDArray::get (the arrays can hold hundreds of millions).
class Reader {
 public:
  explicit Reader(const NDArray &a) : a_(a), t_(a.dtype()) {}
  double operator()(int64_t i) const {
    if (t_.is_bfloat16()) return bfloat16_bits_to_float(a_.data_as<uint16_t>()[i]);
    if (t_.is_float()) {
      switch (t_.bits()) {
        case 16: return half_bits_to_float(a_.data_as<uint16_t>()[i]);
        case 32: return a_.data_as<float>()[i];
        case 64: return a_.data_as<double>()[i];
      }
    }
    return a_.get(i);
  }

 private:
  const NDArray &a_;
  ir::DataType t_;
};

/// A floating-point array as float64 (exactly), the dtype dispatched once.
NDArray widen(const NDArray &a) {
  NDArray w(ir::DataType::float64(), a.shape());
  double *d = w.data_as<double>();
  const int64_t n = a.numel();
  auto each = [&](auto convert) {
    for (int64_t k = 0; k < n; ++k) d[k] = convert(k);
  };
  if (a.dtype().is_bfloat16()) {
    const uint16_t *s = a.data_as<uint16_t>();
    each([s](int64_t k) { return double(bfloat16_bits_to_float(s[k])); });
  } else if (a.dtype().bits() == 16) {
    const uint16_t *s = a.data_as<uint16_t>();
    each([s](int64_t k) { return double(half_bits_to_float(s[k])); });
  } else if (a.dtype().bits() == 32) {
    const float *s = a.data_as<float>();
    each([s](int64_t k) { return double(s[k]); });
  } else {
    Reader read(a);
    each(read);
  }
  return w;
}

std::vector<int64_t> unflatten(int64_t flat, const std::vector<int64_t> &shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    int64_t n = std::max<int64_t>(shape[d], 1);
    idx[d] = flat % n;
    flat /= n;
  }
  return idx;
}

/// "C[3, 17]"
std::string index_name(const std::string &buffer, const std::vector<int64_t> &index) {
  std::string s = buffer + "[";
  for (size_t d = 0; d < index.size(); ++d) s += (d ? ", " : "") + std::to_string(index[d]);
  return s + "]";
}

std::string number(double v) { return fmt::format("{:.6g}", v); }

/// The partial verdict over elements [begin, end).
struct Partial {
  int64_t checked = 0, failures = 0, worst = -1;
  double ratio = -1, got = 0, ref = 0, bound = 0;
};

Partial check_range(const NDArray &got, const NDArray &ref, const NDArray &variance, const std::vector<uint8_t> *only,
                    int64_t begin, int64_t end) {
  Reader g(got), r(ref);
  const double *var = variance.numel() ? variance.data_as<double>() : nullptr;
  bool exact = !got.dtype().is_float() || var == nullptr;
  double u = unit_roundoff_of(got.dtype()), tiny = smallest_subnormal(got.dtype());
  Partial p;
  for (int64_t i = begin; i < end; ++i) {
    if (only && !(*only)[size_t(i)]) continue;
    ++p.checked;
    double x = g(i), y = r(i);
    double bound = 0, ratio = 0;
    bool ok;
    if (exact) {
      ok = x == y || (std::isnan(x) && std::isnan(y));
      ratio = ok ? 0 : INFINITY;
    } else if (!std::isfinite(y)) {
      ok = x == y || (std::isnan(x) && std::isnan(y));  // NaN by NaN, an infinity by the same one
      ratio = ok ? 0 : INFINITY;
    } else {
      bound = kSigmas * std::sqrt(var[i]) + 2 * u * std::fabs(y) + tiny;
      double diff = std::fabs(x - y);
      if (std::isnan(bound)) bound = INFINITY;  // the model breaks down (0 * inf): anything finite passes
      ok = diff <= bound;
      ratio = std::isnan(diff) ? INFINITY : bound > 0 ? diff / bound : (diff == 0 ? 0 : INFINITY);
    }
    p.failures += !ok;
    if (ratio > p.ratio) p = {p.checked, p.failures, i, ratio, x, y, bound};
  }
  return p;
}

}  // namespace

std::vector<NDArray> reference_args(const ReferenceProgram &p, const ir::PrimFunc &f, const std::vector<NDArray> &args) {
  if (args.size() != f.params().size())
    throw UserError(fmt::format("reference of '{}': {} arguments for {} parameters", f.name(), args.size(),
                                f.params().size()));
  std::vector<NDArray> out(p.func.params().size());
  for (size_t i = 0; i < args.size(); ++i) {
    const NDArray &a = args[i];
    if (!a.dtype().is_float() || a.dtype().bits() == 64) {
      out[i] = a;
      continue;
    }
    out[i] = widen(a);
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (int v = p.variance_param[i]; v >= 0) out[size_t(v)] = NDArray(ir::DataType::float64(), args[i].shape());
    if (int q = p.squares_param[i]; q >= 0) {
      NDArray sq(ir::DataType::float64(), args[i].shape());
      const double *w = out[i].data_as<double>();
      double *d = sq.data_as<double>();
      for (int64_t k = 0; k < sq.numel(); ++k) d[k] = w[k] * w[k];
      out[size_t(q)] = std::move(sq);
    }
  }
  return out;
}

Reference collect_reference(const ReferenceProgram &p, const ir::PrimFunc &f, std::vector<NDArray> &&ran) {
  Reference r;
  for (size_t i = 0; i < f.params().size(); ++i) {
    r.values.push_back(std::move(ran[i]));
    int v = p.variance_param[i];
    r.variance.push_back(v >= 0 ? std::move(ran[size_t(v)]) : NDArray());
  }
  return r;
}

Reference compute_reference(const ir::PrimFunc &f, const std::vector<NDArray> &inputs, Oracle oracle,
                            Oracle *used) {
  ReferenceProgram p = make_reference_program(f);
  std::vector<NDArray> args = reference_args(p, f, inputs);
  Oracle ran = execute(p.func, args, oracle);
  if (used) *used = ran;
  return collect_reference(p, f, std::move(args));
}

OutputCheck check_output(const std::string &name, const NDArray &got, const NDArray &ref, const NDArray &variance,
                         const std::vector<uint8_t> *only) {
  if (got.shape() != ref.shape() || (variance.numel() && variance.shape() != ref.shape()) ||
      (only && int64_t(only->size()) != got.numel()))
    throw UserError("check of '" + name + "': the result is " + got.type_str() + " but the reference " +
                    ref.type_str());
  OutputCheck c;
  c.buffer = name;
  c.elements = got.numel();
  // Large outputs are split over the cores: fast_tune checks every candidate.
  int64_t n = got.numel();
  unsigned workers = n < (int64_t(1) << 20) ? 1u : std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  std::vector<Partial> parts(workers);
  if (workers == 1) {
    parts[0] = check_range(got, ref, variance, only, 0, n);
  } else {
    std::vector<std::thread> threads;
    for (unsigned w = 0; w < workers; ++w)
      threads.emplace_back([&, w] { parts[w] = check_range(got, ref, variance, only, n * w / workers, n * (w + 1) / workers); });
    for (std::thread &t : threads) t.join();
  }
  Partial all;
  for (const Partial &p : parts) {
    all.checked += p.checked;
    all.failures += p.failures;
    if (p.worst >= 0 && p.ratio > all.ratio) all = {all.checked, all.failures, p.worst, p.ratio, p.got, p.ref, p.bound};
  }
  c.elements = all.checked;
  c.failures = all.failures;
  c.ok = all.failures == 0;
  if (all.worst >= 0) {
    c.worst_index = unflatten(all.worst, got.shape());
    c.got = all.got;
    c.ref = all.ref;
    c.bound = all.bound;
    c.ratio = all.ratio;
  }
  return c;
}

std::vector<OutputCheck> check_outputs(const ir::PrimFunc &f, const std::vector<NDArray> &got, const Reference &ref,
                                       const std::vector<std::vector<uint8_t>> &only) {
  std::vector<bool> written = ir::written_params(f);
  std::vector<OutputCheck> out;
  for (size_t i = 0; i < f.params().size(); ++i) {
    if (!written[i]) continue;
    ir::Buffer b = f.buffer_of(f.params()[i]);
    const std::vector<uint8_t> *mask = i < only.size() && !only[i].empty() ? &only[i] : nullptr;
    out.push_back(check_output(b.defined() ? b.name() : f.params()[i].name(), got.at(i), ref.values.at(i),
                               ref.variance.at(i), mask));
  }
  return out;
}

std::string element_name(const std::string &buffer, int64_t flat, const std::vector<int64_t> &shape) {
  return index_name(buffer, unflatten(flat, shape));
}

bool all_ok(const std::vector<OutputCheck> &checks) {
  return std::all_of(checks.begin(), checks.end(), [](const OutputCheck &c) { return c.ok; });
}

ChecksSummary summarize_checks(const std::vector<OutputCheck> &checks) {
  ChecksSummary s;
  for (const OutputCheck &c : checks) {
    s.worst_ratio = std::max(s.worst_ratio, c.ratio);
    if (!c.ok) s.failures += (s.failures.empty() ? "" : "; ") + c.str();
  }
  return s;
}

std::string OutputCheck::str() const {
  const std::string where = index_name(buffer, worst_index);
  if (elements == 0) return buffer + ": ok (no elements)";
  double diff = std::fabs(got - ref);
  if (ok) {
    if (bound == 0) return fmt::format("{}: ok, {} elements equal", buffer, elements);
    return fmt::format("{}: ok, worst {}: |{} - {}| = {} <= {} ({:.0f}% of the bound)", buffer, where, number(got),
                       number(ref), number(diff), number(bound), 100 * ratio);
  }
  std::string how = bound == 0 || !std::isfinite(ratio) ? "" : fmt::format(" ({:.3g}x)", ratio);
  // The interpreter fills intermediates with NaN: a NaN reference where the
  // kernel computed a number is most often the program reading what no block
  // wrote (its result there is undefined), not a wrong kernel.
  std::string why = std::isnan(ref) && !std::isnan(got)
                        ? " (the reference is NaN: the original program reads an intermediate element no block "
                          "wrote, or an input holds NaN; the result there is undefined)"
                        : "";
  return fmt::format("{}: WRONG, {} of {} elements outside their bound; worst {}: got {}, reference {}, bound {}{}{}",
                     buffer, failures, elements, where, number(got), number(ref), number(bound), how, why);
}

}  // namespace tessera::runtime
