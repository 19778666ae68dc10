//===- tests/tune/TuneTestUtil.h - Workloads, records and files for tune tests ===//
//
// A small elementwise workload written out as TVMScript with every name,
// shape and dtype a parameter (so tests can rename, reshape and retype it),
// records built from it, and a scratch directory removed after the test.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "tessera/ir/Func.h"
#include "tessera/tune/Database.h"

namespace tessera::test {

/// The names and sizes of `C[i, j] = A[i, j] <op> B[i, j]`.
struct AddSpec {
  std::string func = "add";
  std::string dtype = "float32";
  int64_t rows = 16, cols = 32;
  std::string a = "A", b = "B", c = "C";  ///< buffer names
  std::string i = "i", j = "j";           ///< loop variables
  std::string vi = "vi", vj = "vj";       ///< block iter vars
  std::string op = "+";
  std::string noalias = "tir.noalias";  ///< or the current spelling "tirx.noalias"
  bool symbolic_rows = false;           ///< rows as `T.int32()` named "rows"
};

/// The TVMScript text of `spec`.
std::string add_source(const AddSpec &spec);
/// add_source parsed.
ir::PrimFunc add_func(const AddSpec &spec = {});

/// A directory under the test temp dir, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;
  /// path/name
  std::string file(const std::string &name) const;

 private:
  std::string path_;
};

/// An "ok" record of `key` for the elementwise rule with `threads` threads.
tuning::Record ok_record(const tuning::TuningKey &key, int64_t threads, double time_us);

/// The whole file as text.
std::string read_text(const std::string &path);
/// Appends raw bytes (no locking, no newline added): to fake damaged files.
void append_text(const std::string &path, const std::string &text);

}  // namespace tessera::test
