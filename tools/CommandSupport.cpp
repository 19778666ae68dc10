//===- tools/CommandSupport.cpp - What the `tessera` subcommands share ----===//
#include "CommandSupport.h"

#include <iostream>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "Commands.h"
#include "tessera/tune/Database.h"
#include "tessera/tessera.h"
#include "tessera/runtime/CudaDriver.h"

namespace tessera::cli {

int guarded(std::ostream &err, const std::function<int()> &body) {
  try {
    return body();
  } catch (const script::ParseError &e) {
    err << e.what() << "\n";
    return 1;
  } catch (const UserError &e) {
    err << "error: " << e.what() << "\n";
    return 1;
  } catch (const InternalError &e) {
    err << e.what() << "\n";
    return 2;
  } catch (const std::exception &e) {
    err << "internal error (this is a bug in tessera): " << e.what() << "\n";
    return 2;
  }
}

ir::PrimFunc select_func(const ir::Module &m, const std::string &wanted, const std::string &file) {
  if (!wanted.empty()) {
    if (ir::PrimFunc f = m.lookup(wanted); f.defined()) return f;
    throw UserError(file + ": no function named '" + wanted + "'");
  }
  if (m.funcs.size() == 1) return m.funcs[0];
  if (ir::PrimFunc f = m.lookup("main"); f.defined()) return f;
  std::string names;
  for (const ir::PrimFunc &f : m.funcs) names += (names.empty() ? "" : ", ") + f.name();
  throw UserError(file + " holds several functions (" + names + "): choose one with --func");
}

void default_dims(const ir::PrimFunc &f, runtime::DimBindings &dims, std::ostream &out) {
  for (const ir::Var &v : f.shape_vars())
    if (dims.emplace(v.name(), kDefaultDim).second)
      out << "# " << v.name() << " = " << kDefaultDim << ": no --dim " << v.name() << "=N given\n";
}

std::string read_text(const std::string &path) {
  std::ifstream in(path);
  if (!in) throw UserError("cannot read '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::pair<std::string, int64_t> parse_dim_binding(const std::string &text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UserError("--dim expects NAME=VALUE, got '" + text + "'");
  std::string name = text.substr(0, eq);
  std::string value = text.substr(eq + 1);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p != value.data() + value.size() || value.empty())
    throw UserError("--dim " + name + ": expected an integer, got '" + value + "'");
  if (v < 0) throw UserError("--dim " + name + ": a dimension cannot be negative, got " + value);
  return {name, v};
}

LoadedFunc load_func(const std::string &file, const std::string &func, const std::vector<std::string> &dim_texts) {
  runtime::DimBindings dims;
  for (const std::string &d : dim_texts) {
    auto [name, value] = parse_dim_binding(d);
    dims[name] = value;
  }
  ir::Module m = script::parse_file(file);
  for (const std::string &w : m.warnings) std::cerr << w << "\n";
  ir::PrimFunc f = select_func(m, func, file);
  // A --dim that names nothing of the function is a typo, not a no-op.
  std::vector<std::string> known;
  for (const ir::Var &v : f.shape_vars()) known.push_back(v.name());
  for (const ir::Var &p : f.params())
    if (!f.buffer_of(p).defined() && std::find(known.begin(), known.end(), p.name()) == known.end())
      known.push_back(p.name());
  for (const auto &[name, value] : dims)
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw UserError(fmt::format("--dim {}={}: '{}' has no symbolic size or scalar parameter named '{}' ({})", name,
                                  value, f.name(), name,
                                  known.empty() ? std::string("its sizes are all fixed")
                                                : fmt::format("it has {}", fmt::join(known, ", "))));
  return {f, dims};
}

Arch resolve_arch(const std::string &name, std::ostream &out) {
  if (name != "auto") return Arch::by_name(name);
  Target t = Target::detect_gpu("h100");
  if (!t.note().empty()) out << "# arch: " << t.note() << "\n";
  return t.arch();
}

int report_checks(const std::vector<runtime::OutputCheck> &checks, const std::string &prefix, const std::string &what,
                  std::ostream &out, std::ostream &err) {
  int status = 0;
  for (const runtime::OutputCheck &c : checks) {
    out << prefix << c.str() << "\n";
    if (c.ok) continue;
    err << "error: " << what << ": " << c.str() << "\n";
    status = 1;
  }
  return status;
}

std::string default_database_path() { return tuning::default_database_path(); }

std::optional<tuning::Database> open_database(const std::string &option, std::ostream &err) {
  std::string path = option.empty() ? default_database_path() : option;
  if (path == "none") return std::nullopt;
  tuning::Database db = tuning::Database::create(path);
  for (const tuning::DatabaseWarning &w : db.warnings()) err << "warning: " << w.str(path) << "\n";
  return db;
}

}  // namespace tessera::cli
