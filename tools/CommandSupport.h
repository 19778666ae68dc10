//===- tools/CommandSupport.h - What the `tessera` subcommands share -------===//
//
// Loading the function a command works on, the exit-status convention, and
// the --arch resolution, for Commands.cpp, TuneCommand.cpp and BenchCommand.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tessera/arch/Arch.h"
#include "tessera/ir/Func.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/Verify.h"
#include "tessera/script/Parser.h"
#include "tessera/tune/Database.h"

namespace tessera::cli {

/// Runs `body`, mapping exceptions to the documented exit statuses: 1 for
/// user errors (printed as "error: ..."; parse errors as they are), 2 for
/// internal ones.
int guarded(std::ostream &err, const std::function<int()> &body);

/// The function `wanted` of module `m` (read from `file`), or its only
/// function, or its "main"; a UserError listing the names otherwise.
ir::PrimFunc select_func(const ir::Module &m, const std::string &wanted, const std::string &file);

/// Binds each symbolic dimension of `f` that `dims` leaves out to
/// kDefaultDim, and says so on `out` ("# n = 64: no --dim n=N given"), so
/// that `run` and `schedule --verify` work on a symbolic function as it is.
inline constexpr int64_t kDefaultDim = 64;
void default_dims(const ir::PrimFunc &f, runtime::DimBindings &dims, std::ostream &out);

/// The whole file; UserError when it cannot be read.
std::string read_text(const std::string &path);

/// The function of a command: its `--dim` bindings (checked first) and the
/// function `func` of `file`.
struct LoadedFunc {
  ir::PrimFunc f;
  runtime::DimBindings dims;
};
LoadedFunc load_func(const std::string &file, const std::string &func, const std::vector<std::string> &dim_texts);

/// Prints one `PREFIX<check>` line per output (runtime::OutputCheck::str)
/// on `out` and, for each wrong one, "error: WHAT: <check>" on `err`; returns
/// the exit status (1 when an output is wrong).
int report_checks(const std::vector<runtime::OutputCheck> &checks, const std::string &prefix, const std::string &what,
                  std::ostream &out, std::ostream &err);

/// The Arch of a command's --arch: a preset name, a .json file, or "auto"
/// (the live device; without one h100, saying so on `out` as a comment line).
Arch resolve_arch(const std::string &name, std::ostream &out);

/// The tuning database a --db option names ("": default_database_path(),
/// "none": none), its directory created; each skipped line a warning on `err`.
std::optional<tuning::Database> open_database(const std::string &option, std::ostream &err);

}  // namespace tessera::cli
