//===- lib/schedule/Intrinsic.cpp - The tensor intrinsic registry ----------===//
#include "tessera/schedule/Intrinsic.h"

#include <map>
#include <mutex>

#include "tessera/ir/StructuralEqual.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"
#include "tessera/support/Error.h"

namespace tessera::schedule {

using namespace ir;

namespace {

/// The built-in example: a 4-wide float32 dot product accumulated into C[0].
const char *kDot4Desc = R"(
@T.prim_func
def dot4_desc(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((1,), "float32")):
    for k in range(4):
        with T.block("update"):
            vk = T.axis.reduce(4, k)
            C[0] = C[0] + A[vk] * B[vk]
)";

const char *kDot4Impl = R"(
@T.prim_func
def dot4_impl(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((1,), "float32")):
    C[0] = C[0] + A[0] * B[0] + A[1] * B[1] + A[2] * B[2] + A[3] * B[3]
)";

struct Registry {
  std::mutex mu;
  std::map<std::string, TensorIntrin> intrins;
};

std::string describe(const Buffer &b) {
  std::string s = b.name() + ": (";
  for (int a = 0; a < b.ndim(); ++a) s += (a ? ", " : "") + script::print(b.shape()[a]);
  return s + (b.ndim() == 1 ? ",), " : "), ") + b.dtype().str();
}

void check_same_params(const std::string &name, const PrimFunc &desc, const PrimFunc &impl) {
  std::vector<Buffer> d = desc.param_buffers(), i = impl.param_buffers();
  auto fail = [&](const std::string &why) {
    throw UserError("cannot register tensor intrinsic '" + name + "': " + why);
  };
  if (d.empty()) fail("the description has no buffer parameters");
  if (d.size() != i.size())
    fail("the description has " + std::to_string(d.size()) + " buffer parameters but the implementation has " +
         std::to_string(i.size()));
  for (size_t k = 0; k < d.size(); ++k) {
    bool same = d[k].dtype() == i[k].dtype() && d[k].ndim() == i[k].ndim();
    for (int a = 0; same && a < d[k].ndim(); ++a) same = structural_equal(d[k].shape()[a], i[k].shape()[a]);
    if (!same)
      fail("buffer parameter " + std::to_string(k) + " is " + describe(d[k]) + " in the description but " +
           describe(i[k]) + " in the implementation");
  }
}

Registry &registry() {
  static Registry *r = [] {
    auto *reg = new Registry;
    PrimFunc desc = script::parse_func(kDot4Desc), impl = script::parse_func(kDot4Impl);
    reg->intrins.emplace("tessera.dot4_f32", TensorIntrin{"tessera.dot4_f32", desc, impl});
    return reg;
  }();
  return *r;
}

}  // namespace

void register_intrinsic(const std::string &name, const PrimFunc &desc, const PrimFunc &impl) {
  if (name.empty()) throw UserError("cannot register a tensor intrinsic without a name");
  TESSERA_ICHECK(desc.defined() && impl.defined()) << "tensor intrinsic '" << name << "' with an undefined function";
  check_same_params(name, desc, impl);
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.intrins.find(name);
  if (it != r.intrins.end()) {
    if (structural_equal(it->second.desc, desc) && structural_equal(it->second.impl, impl)) return;
    throw UserError("tensor intrinsic '" + name + "' is already registered with other functions");
  }
  r.intrins.emplace(name, TensorIntrin{name, desc, impl});
}

const TensorIntrin *lookup_intrinsic(const std::string &name) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.intrins.find(name);
  return it == r.intrins.end() ? nullptr : &it->second;
}

std::vector<std::string> intrinsic_names() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> out;
  for (const auto &[n, _] : r.intrins) out.push_back(n);
  return out;
}

}  // namespace tessera::schedule
