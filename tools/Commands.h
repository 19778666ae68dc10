//===- tools/Commands.h - The `tessera` subcommands ------------------------===//
//
// Each subcommand of the `tessera` program is a function from parsed options
// to an exit status, writing to the given streams, so tests can drive it
// without spawning a process. Main.cpp only parses the command line (CLI11).
//
//   tessera fmt FILE...                       canonical TVMScript to stdout
//   tessera run FILE [--dim n=64] [--seed S]  interpret on random inputs
//   tessera schedule FILE --trace T.json [--verify] [--dim n=64] [--seed S]
//                                             apply a schedule trace, print the result
//
// Exit status: 0 success, 1 user error (bad input, reported as
// "FILE:LINE:COL: error: ..." or "error: ..."), 2 internal error (a bug).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace tessera::cli {

struct FmtOptions {
  std::vector<std::string> files;
};

/// Prints each file in canonical form. A file that fails to parse is reported
/// on `err` and the others are still printed; returns 1 if any failed.
int fmt_command(const FmtOptions &opts, std::ostream &out, std::ostream &err);

struct RunOptions {
  std::string file;
  /// "NAME=VALUE" bindings for symbolic dimensions.
  std::vector<std::string> dims;
  uint64_t seed = 0;
  /// Which function of a module to run; empty: the only one, else "main".
  std::string func;
};

/// Interprets a function on random inputs and prints, for every buffer
/// parameter in order, `NAME DTYPE[SHAPE] l2=... max=... mean=...`.
int run_command(const RunOptions &opts, std::ostream &out, std::ostream &err);

struct ScheduleCommandOptions {
  std::string file;
  /// A JSON schedule trace (README "Schedule traces").
  std::string trace;
  /// Also run the original and the scheduled function on the same random inputs.
  bool verify = false;
  std::vector<std::string> dims;
  uint64_t seed = 0;
  std::string func;
};

/// Replays the trace on the function and prints the scheduled TVMScript. With
/// `verify`, both functions run through the interpreter on the same random
/// inputs and a comment line per output buffer follows the script:
///   # verify: C max_rel_error=0 (rtol 1e-05): ok
/// Returns 1 when an output differs beyond runtime::default_rtol of its dtype
/// ("mismatch"), or when the trace fails (the ScheduleError is printed with the
/// function and the offending loops/blocks marked).
int schedule_command(const ScheduleCommandOptions &opts, std::ostream &out, std::ostream &err);

/// Parses "n=64" into (name, value); throws UserError on bad syntax.
std::pair<std::string, int64_t> parse_dim_binding(const std::string &text);

}  // namespace tessera::cli
