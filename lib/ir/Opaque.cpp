//===- lib/ir/Opaque.cpp - Code tessera cannot see into ---------------------===//
#include "tessera/ir/Opaque.h"

#include "DiffText.h"
#include "tessera/ir/Functor.h"
#include "tessera/support/Error.h"

namespace tessera::ir {

namespace {

struct Finder : IRVisitor {
  std::optional<std::string> found;
  std::string block = "root";
  using IRVisitor::visit;
  void visit(const Expr &e) override {
    if (found) return;
    if (e.is<OpaqueCall>()) {
      found = detail::expr_text(e) + " in block '" + block + "'";
      return;
    }
    IRVisitor::visit(e);
  }
  void visit_(const Block *b) override {
    std::string saved = block;
    block = b->name;
    IRVisitor::visit_(b);
    block = saved;
  }
};

}  // namespace

std::optional<std::string> find_opaque(const PrimFunc &f) {
  Finder finder;
  finder.visit(f.body());
  return finder.found;
}

void check_no_opaque(const PrimFunc &f, const std::string &what) {
  if (auto o = find_opaque(f))
    throw UserError("cannot " + what + " function '" + f.name() + "': it calls " + *o +
                    ", which tessera has no semantics for (an opaque call)");
}

}  // namespace tessera::ir
