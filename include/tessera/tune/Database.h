//===- tessera/tune/Database.h - The tuning database (JSON lines) ----------===//
//
// Every config the tuner measures is remembered, with its time or why it has
// none, so a later run (or an inference engine at startup) takes the best one
// without tuning again:
//
//   Database db = Database::open("tuning.jsonl");       // a missing file is empty
//   TuningKey key = TuningKey::of(func, arch);
//   db.append({Record{.key = key, .workload = workload_summary(func), .rule = "elementwise",
//                     .config = cfg->to_json(), .status = RecordStatus::Ok, .time_us = 12.5}});
//   std::optional<Record> best = db.best(key);          // the fastest "ok" record of exactly `key`
//
// The file holds one JSON object per line (a record), in the order appended:
//
//   {"key": {"workload": "9f3c0a12b4e5d6c7", "arch": "h100_sxm/sm_90/132sm",
//            "nvrtc": "13.0", "driver": "13.0", "tessera": "0.1.0"},
//    "workload": {"name": "add", "buffers": [{"name": "A", "dtype": "float16", "shape": [64, 128]}, ...]},
//    "rule": "elementwise",
//    "config": {"rule": "elementwise", "threads": 256, "vector": 4, "per_thread": 1, "unroll": 0},
//    "status": "ok", "time_us": 12.5,
//    "timestamp": "2025-06-01T12:00:00Z", "git": "1d03c6d9e2ab"}
//
// (shown on several lines here; in the file each record is one line).
//   key        required; the five strings of TuningKey (see TuningKey.h). Lookups
//              compare all five.
//   workload   optional; for people reading the file (name, parameter buffers
//              with dtype and shape). Not part of the key.
//   rule       required; the rule that scheduled the function ("matmul", ...).
//   config     required object; what that rule's Config::to_json wrote.
//   status     required; "ok", "compile_error", "launch_error", "wrong_answer"
//              or "skipped".
//   time_us    the median kernel time in microseconds: required (> 0) for "ok",
//              absent otherwise.
//   error      optional string: why the candidate failed or was skipped.
//   timestamp  required; UTC, ISO 8601 ("2025-06-01T12:00:00Z").
//   git        optional; the tessera commit that measured it (Version.h).
// Other fields are ignored, so files of newer writers still read.
//
// Reading never fails on a bad line: a line that is not JSON, or not a valid
// record (a missing field, a wrong type, an unknown status), and a truncated
// last line (an interrupted write) are skipped, each with a warning naming the
// line and the reason; every other record is kept. Empty lines are ignored.
//
// Appending is atomic and safe with several processes writing the same file:
// the batch is written under an exclusive flock(2) with O_APPEND in a single
// write(2) (complete lines only) and fsync'd, so lines of two tuners never
// interleave. When the file does not end with a newline (a truncated last
// line), the batch starts with one, so the new records never glue onto it.
// Readers take a shared lock, so they never see half of a batch.
//
// One Database object is not safe to use from several threads at once; open
// one per thread (the file lock then orders their appends).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/support/Error.h"
#include "tessera/tune/TuningKey.h"

namespace tessera::tuning {

/// An unusable database file (cannot be read, created or written) or a record
/// that cannot be stored (it would not read back): the message names the path.
class DatabaseError : public UserError {
 public:
  using UserError::UserError;
};

/// What became of one measured config.
enum class RecordStatus {
  Ok,            ///< compiled, ran, right answer: time_us is its median time
  CompileError,  ///< NVRTC rejected it (or the rule's apply/validate did)
  LaunchError,   ///< the driver refused to load or launch it
  WrongAnswer,   ///< ran but disagreed with the reference
  Skipped,       ///< not measured (e.g. over a time budget)
};

/// "ok", "compile_error", "launch_error", "wrong_answer", "skipped".
const char *to_string(RecordStatus s);
/// The inverse of to_string; nullopt for anything else.
std::optional<RecordStatus> parse_record_status(std::string_view text);

/// One line of the file (see the file comment for the fields).
struct Record {
  TuningKey key;
  Json workload;  ///< workload_summary(func), or null
  std::string rule;
  Json config = Json::object();
  RecordStatus status = RecordStatus::Ok;
  std::optional<double> time_us;  ///< for Ok only
  std::string error;              ///< "" when none
  std::string timestamp;          ///< Database::append fills it in when empty
  std::string git;                ///< Database::append fills in git_hash() when empty

  /// The record as one JSON object (fields in the documented order; empty
  /// optional fields left out).
  Json to_json() const;
  /// Reads and validates a record; RecordFormatError saying what is wrong
  /// ("field 'status': expected one of ok, ... , got \"fast\"").
  static Record from_json(const Json &j);

  bool operator==(const Record &) const = default;
};

/// A JSON value that is not a valid record; what() is the reason.
class RecordFormatError : public UserError {
 public:
  using UserError::UserError;
};

/// A line that open() skipped.
struct DatabaseWarning {
  int line = 0;        ///< 1-based
  std::string reason;  ///< "not valid JSON (...)", "not a tuning record: missing the field 'rule'"
  /// "PATH:LINE: skipped: REASON"
  std::string str(std::string_view path) const;
};

/// The current time as the records write it: "2025-06-01T12:00:00Z".
std::string utc_timestamp();

/// Where the tuning database is by default: $TESSERA_DB, else
/// $XDG_CACHE_HOME/tessera/tuning.jsonl, else ~/.cache/tessera/tuning.jsonl.
std::string default_database_path();

class Database {
 public:
  /// Reads every record of `path` under a shared lock. A missing file is an
  /// empty database (append creates it); an unreadable path (a directory, no
  /// permission) is a DatabaseError. Bad lines become warnings().
  static Database open(std::string path);
  /// open(), after creating the file's directory where it is missing (a
  /// database about to be appended to); a directory that cannot be made is
  /// a DatabaseError.
  static Database create(std::string path);

  const std::string &path() const { return path_; }
  /// Every valid record, in file order (then the ones appended through this object).
  const std::vector<Record> &records() const { return records_; }
  /// The records of exactly `key`, in file order.
  std::vector<Record> records(const TuningKey &key) const;
  /// The fastest "ok" record of exactly `key` (the first of equal times);
  /// nullopt when there is none. Never a record of another key.
  std::optional<Record> best(const TuningKey &key) const;
  /// The lines open() skipped, in file order.
  const std::vector<DatabaseWarning> &warnings() const { return warnings_; }

  /// Appends `batch` to the file atomically (see the file comment) and to
  /// records(). Empty timestamps become utc_timestamp(), empty git fields
  /// git_hash(). A record that would not read back (Record::from_json) is a
  /// DatabaseError and nothing is written; so is a failed write.
  void append(std::vector<Record> batch);

 private:
  explicit Database(std::string path) : path_(std::move(path)) {}

  std::string path_;
  std::vector<Record> records_;
  std::vector<DatabaseWarning> warnings_;
};

}  // namespace tessera::tuning
