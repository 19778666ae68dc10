//===- tessera/support/Error.h - Error classes shared by every area --------===//
//
// tessera keeps failure kinds apart (STYLE.md 3.4):
//   - `Error` is the base of every exception tessera throws on purpose;
//   - `InternalError` is a broken invariant ("this is a bug"), raised by
//     TESSERA_ICHECK;
//   - `UserError` is bad input that the user can fix (a malformed program, an
//     unbound symbolic dimension, an out-of-bounds access found while
//     interpreting, an unknown dtype name, ...).
// Areas derive their own classes (ParseError, ScheduleError, CompileError, ...)
// from these.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace tessera {

/// Base of every exception tessera throws on purpose.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string &msg) : std::runtime_error(msg) {}
};

/// A broken internal invariant: always a bug in tessera, never the user's fault.
class InternalError : public Error {
 public:
  explicit InternalError(const std::string &msg) : Error(msg) {}
};

/// Input the user can fix: a malformed program, a bad argument, an unbound
/// symbolic dimension, an out-of-bounds access in an interpreted program.
class UserError : public Error {
 public:
  explicit UserError(const std::string &msg) : Error(msg) {}
};

namespace detail {

/// Collects a message with `<<` and throws `InternalError` when destroyed.
/// Used only through TESSERA_ICHECK.
class ICheckFailure {
 public:
  ICheckFailure(const char *file, int line, const char *cond) {
    os_ << file << ":" << line << ": internal error (this is a bug in tessera): check '" << cond
        << "' failed";
  }
  template <typename T>
  ICheckFailure &operator<<(const T &v) {
    if (!has_msg_) {
      os_ << ": ";
      has_msg_ = true;
    }
    os_ << v;
    return *this;
  }
  [[noreturn]] ~ICheckFailure() noexcept(false) { throw InternalError(os_.str()); }

 private:
  std::ostringstream os_;
  bool has_msg_ = false;
};

}  // namespace detail
}  // namespace tessera

/// `TESSERA_ICHECK(cond) << "message"` throws InternalError with file:line when
/// `cond` is false. For invariants only; user mistakes get a UserError subclass.
/// (A `while` rather than `if`/`else` so it nests under an unbraced `if`; the
/// failure object throws when the statement ends, so the loop never repeats.)
#define TESSERA_ICHECK(cond) \
  while (!(cond)) ::tessera::detail::ICheckFailure(__FILE__, __LINE__, #cond)

/// Unconditional internal failure, e.g. an unhandled enum value.
#define TESSERA_UNREACHABLE(msg) ::tessera::detail::ICheckFailure(__FILE__, __LINE__, "unreachable") << msg
