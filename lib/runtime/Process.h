//===- Process.h - Running an external program (private to lib/runtime) ----===//
//
// The disassemblers (Sass.h) are separate programs. run_process starts one
// with posix_spawn, collects its standard output and error through pipes and
// kills it (with what it started) at a deadline; TempFile hands it its input.
// Both are safe to use from many threads at once: every descriptor is
// close-on-exec, so no child inherits another thread's pipe (which would hold
// that pipe open until the child exited).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::runtime::detail {

/// A file in the temporary directory holding `bytes`, removed by the
/// destructor. Throws DisassembleError when it cannot be written.
class TempFile {
 public:
  TempFile(const std::vector<uint8_t> &bytes, const std::string &suffix);
  ~TempFile();
  TempFile(const TempFile &) = delete;
  TempFile &operator=(const TempFile &) = delete;
  const std::string &path() const { return path_; }

 private:
  std::string path_;
};

struct ProcessResult {
  std::string out, err;
  int status = 0;          ///< as waitpid reports it
  bool timed_out = false;  ///< killed at the deadline
};

/// Runs argv[0] (a path) with `argv`, stdin from /dev/null, until it exits or
/// `timeout_s` pass; then it and its own children (its process group) are
/// killed. Throws DisassembleError when it cannot be started.
ProcessResult run_process(const std::vector<std::string> &argv, double timeout_s);

/// Why `result` is a failure ("exited with status 1: <first lines of stderr>"),
/// "" when the program exited with status 0. `command` names it in the message.
std::string process_failure(const std::string &command, const ProcessResult &result, double timeout_s);

}  // namespace tessera::runtime::detail
