//===- lib/tune/Database.cpp - Reading and appending the JSON-lines file ----===//
//
// The file protocol (Database.h): readers hold flock(LOCK_SH) while reading,
// writers hold flock(LOCK_EX) while appending one batch with O_APPEND. Both
// locks are advisory, which is enough: every tessera process takes them.
//
//===----------------------------------------------------------------------===//
#include "tessera/tune/Database.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "tessera/support/DataPaths.h"
#include "tessera/support/Version.h"

namespace tessera::tuning {

namespace {

/// A file descriptor closed on scope exit (which also drops its flock).
class FileHandle {
 public:
  explicit FileHandle(int fd) : fd_(fd) {}
  FileHandle(const FileHandle &) = delete;
  FileHandle &operator=(const FileHandle &) = delete;
  ~FileHandle() {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

[[noreturn]] void fail_io(const std::string &path, const char *what) {
  throw DatabaseError(fmt::format("tuning database {}: {}: {}", path, what, std::strerror(errno)));
}

void lock(int fd, int operation, const std::string &path) {
  while (::flock(fd, operation) != 0)
    if (errno != EINTR) fail_io(path, "cannot lock");
}

std::string read_all(int fd, const std::string &path) {
  std::string text;
  char chunk[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n == 0) return text;
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_io(path, "cannot read");
    }
    text.append(chunk, static_cast<size_t>(n));
  }
}

void write_all(int fd, std::string_view bytes, const std::string &path) {
  // One write() for the whole batch; the loop only continues a write the
  // kernel cut short (a signal, a full disk), still under the lock.
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_io(path, "cannot write");
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

/// True when the file is empty or its last byte is a newline.
bool ends_with_newline(int fd, const std::string &path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail_io(path, "cannot stat");
  if (st.st_size == 0) return true;
  char last = 0;
  if (::pread(fd, &last, 1, st.st_size - 1) != 1) fail_io(path, "cannot read the last byte");
  return last == '\n';
}

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

/// nlohmann's message without its "[json.exception.parse_error.101] " prefix.
std::string parse_reason(const Json::exception &e) {
  std::string_view what = e.what();
  if (size_t close = what.find("] "); what.starts_with("[json.exception") && close != std::string_view::npos)
    what.remove_prefix(close + 2);
  return std::string(what);
}

}  // namespace

Database Database::create(std::string path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) throw DatabaseError("tuning database " + path + ": cannot create its directory: " + ec.message());
  return open(std::move(path));
}

std::string default_database_path() {
  return support::user_cache_path("TESSERA_DB", "tuning.jsonl", "tessera_tuning.jsonl").string();
}

Database Database::open(std::string path) {
  Database db(std::move(path));
  int fd = ::open(db.path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return db;
    fail_io(db.path_, "cannot open");
  }
  FileHandle file(fd);
  lock(fd, LOCK_SH, db.path_);
  std::string text = read_all(fd, db.path_);

  size_t begin = 0;
  for (int line_no = 1; begin < text.size(); ++line_no) {
    size_t end = text.find('\n', begin);
    bool complete = end != std::string::npos;
    std::string_view line(text.data() + begin, (complete ? end : text.size()) - begin);
    begin = complete ? end + 1 : text.size();
    if (is_blank(line)) continue;

    // A last line without its newline is an interrupted write unless it
    // happens to be a whole record.
    std::string truncated = complete ? "" : " (the last line has no newline: an interrupted write?)";
    Json j;
    try {
      j = Json::parse(line);
    } catch (const Json::exception &e) {
      db.warnings_.push_back({line_no, "not valid JSON: " + parse_reason(e) + truncated});
      continue;
    }
    try {
      db.records_.push_back(Record::from_json(j));
    } catch (const RecordFormatError &e) {
      db.warnings_.push_back({line_no, std::string("not a tuning record: ") + e.what() + truncated});
    }
  }
  return db;
}

std::vector<Record> Database::records(const TuningKey &key) const {
  std::vector<Record> out;
  for (const Record &r : records_)
    if (r.key == key) out.push_back(r);
  return out;
}

std::optional<Record> Database::best(const TuningKey &key) const {
  const Record *best = nullptr;
  for (const Record &r : records_) {
    if (r.key != key || r.status != RecordStatus::Ok) continue;
    if (!best || *r.time_us < *best->time_us) best = &r;
  }
  if (!best) return std::nullopt;
  return *best;
}

void Database::append(std::vector<Record> batch) {
  if (batch.empty()) return;
  std::string now = utc_timestamp();
  std::string lines;
  for (size_t i = 0; i < batch.size(); ++i) {
    Record &r = batch[i];
    if (r.timestamp.empty()) r.timestamp = now;
    if (r.git.empty()) r.git = std::string(git_hash());
    Json j = r.to_json();
    try {
      Record::from_json(j);
    } catch (const RecordFormatError &e) {
      throw DatabaseError(
          fmt::format("tuning database {}: record {} of the batch is not valid: {}", path_, i, e.what()));
    }
    // Strings are escaped (a newline becomes \n), so one record is one line;
    // bytes that are not UTF-8 (a compiler log) become U+FFFD.
    lines += j.dump(-1, ' ', false, Json::error_handler_t::replace);
    lines += '\n';
  }

  // Read-write: the last byte is read (pread) before appending.
  int fd = ::open(path_.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) fail_io(path_, "cannot open for appending");
  FileHandle file(fd);
  lock(fd, LOCK_EX, path_);
  // Checked under the lock: no other writer can change the last byte now.
  if (!ends_with_newline(fd, path_)) lines.insert(lines.begin(), '\n');
  write_all(fd, lines, path_);
  if (::fsync(fd) != 0) fail_io(path_, "cannot sync");
  lock(fd, LOCK_UN, path_);

  for (Record &r : batch) records_.push_back(std::move(r));
}

}  // namespace tessera::tuning
