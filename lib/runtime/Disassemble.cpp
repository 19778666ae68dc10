//===- Disassemble.cpp - Finding and running cuobjdump -sass ---------------===//
//
// cuobjdump is an optional external program: it is looked for on every call
// (a handful of stat calls), run with posix_spawn on a temporary copy of the
// cubin, and its output read through pipes with a deadline. The tuner calls
// this from many threads at once, so every descriptor we create is
// close-on-exec: a pipe inherited by another thread's child would keep our
// read end from seeing end-of-file until that child exited.
//
//===----------------------------------------------------------------------===//
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "tessera/runtime/Sass.h"
#include "tessera/support/DataPaths.h"

extern char **environ;

namespace tessera::runtime {

namespace fs = std::filesystem;

namespace {

bool is_executable(const fs::path &p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

/// <root>/.deps/cuda-tools/nvidia/cu*/bin/cuobjdump, the newest CUDA major first.
std::optional<fs::path> project_local(const fs::path &root) {
  std::error_code ec;
  fs::path nvidia = root / ".deps" / "cuda-tools" / "nvidia";
  std::vector<fs::path> found;
  for (fs::directory_iterator it(nvidia, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().starts_with("cu") && is_executable(it->path() / "bin" / "cuobjdump"))
      found.push_back(it->path() / "bin" / "cuobjdump");
  if (found.empty()) return std::nullopt;
  // "cu13" < "cu14"; lengths differ only past cu99.
  std::sort(found.begin(), found.end());
  return found.back();
}

std::optional<fs::path> on_path() {
  const char *path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::string_view rest(path);
  while (!rest.empty()) {
    size_t colon = rest.find(':');
    std::string_view dir = rest.substr(0, colon);
    rest.remove_prefix(colon == std::string_view::npos ? rest.size() : colon + 1);
    if (!dir.empty() && is_executable(fs::path(dir) / "cuobjdump")) return fs::path(dir) / "cuobjdump";
  }
  return std::nullopt;
}

/// A temporary file holding `bytes`, removed by the destructor.
class TempCubin {
 public:
  explicit TempCubin(const std::vector<uint8_t> &bytes) {
    std::string pattern = (fs::temp_directory_path() / "tessera-sass-XXXXXX.cubin").string();
    int fd = ::mkostemps(pattern.data(), 6, O_CLOEXEC);
    if (fd < 0)
      throw DisassembleError("cannot create a temporary file for the cubin: " + std::string(strerror(errno)));
    path_ = pattern;
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fd);
        throw DisassembleError("cannot write the cubin to " + path_ + ": " + strerror(errno));
      }
      done += size_t(n);
    }
    ::close(fd);
  }
  ~TempCubin() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TempCubin(const TempCubin &) = delete;
  TempCubin &operator=(const TempCubin &) = delete;
  const std::string &path() const { return path_; }

 private:
  std::string path_;
};

/// Closes the descriptors it holds.
struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fd, O_CLOEXEC) != 0) throw DisassembleError(std::string("pipe: ") + strerror(errno));
  }
  ~Pipe() {
    close_end(0);
    close_end(1);
  }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]), fd[i] = -1;
  }
};

struct Finished {
  std::string out, err;
  int status = 0;
  bool timed_out = false;
};

/// Runs argv[0] with `argv`, stdin from /dev/null; collects both outputs
/// until it exits or `timeout_s` pass (then it is killed).
Finished run_process(const std::vector<std::string> &argv, double timeout_s) {
  Pipe out, err;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fd[1], 2);
  std::vector<char *> args;
  for (const std::string &a : argv) args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  // Its own process group, so a timeout kills cuobjdump and the nvdisasm it runs.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw DisassembleError(fmt::format("cannot run {}: {}", argv[0], strerror(rc)));
  out.close_end(1);
  err.close_end(1);

  Finished f;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
  std::string *sinks[2] = {&f.out, &f.err};
  char buf[65536];
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      f.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    int n = ::poll(fds, 2, int(std::min<int64_t>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0)
        sinks[i]->append(buf, size_t(got));
      else if (got == 0 || errno != EINTR)
        fds[i].fd = -1;  // end of file (the Pipe closes it)
    }
  }
  while (::waitpid(pid, &f.status, 0) < 0 && errno == EINTR) {
  }
  return f;
}

std::string first_lines(const std::string &text, int n) {
  size_t end = 0;
  for (int i = 0; i < n && end != std::string::npos; ++i) end = text.find('\n', end ? end + 1 : 0);
  std::string s = text.substr(0, end);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::optional<fs::path> find_disassembler() {
  if (const char *env = std::getenv("TESSERA_CUOBJDUMP"); env && *env) {
    if (is_executable(env)) return fs::path(env);
    return std::nullopt;
  }
  try {
    if (auto p = project_local(support::data_root())) return p;
  } catch (const std::exception &) {
    // A bad $TESSERA_HOME is reported where data is needed, not here.
  }
  if (auto p = on_path()) return p;
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *home = std::getenv(var);
        home && *home && is_executable(fs::path(home) / "bin" / "cuobjdump"))
      return fs::path(home) / "bin" / "cuobjdump";
  if (is_executable("/usr/local/cuda/bin/cuobjdump")) return fs::path("/usr/local/cuda/bin/cuobjdump");
  return std::nullopt;
}

std::string disassemble(const std::vector<uint8_t> &cubin, const fs::path &tool, double timeout_s) {
  if (cubin.empty()) throw DisassembleError("cannot disassemble an empty cubin");
  TempCubin file(cubin);
  Finished f = run_process({tool.string(), "-sass", file.path()}, timeout_s);
  std::string command = fmt::format("{} -sass {}", tool.string(), file.path());
  if (f.timed_out)
    throw DisassembleError(fmt::format("{} ran longer than {:g} s and was killed", command, timeout_s));
  if (WIFSIGNALED(f.status))
    throw DisassembleError(
        fmt::format("{} was killed by signal {}: {}", command, WTERMSIG(f.status), first_lines(f.err, 5)));
  if (!WIFEXITED(f.status) || WEXITSTATUS(f.status) != 0) {
    // posix_spawn reports a missing or non-executable program as exit 127.
    std::string why = f.err.empty() ? std::string("no message") : first_lines(f.err, 5);
    throw DisassembleError(fmt::format("{} exited with status {}: {}", command, WEXITSTATUS(f.status), why));
  }
  return f.out;
}

std::string disassemble(const std::vector<uint8_t> &cubin) {
  std::optional<fs::path> tool = find_disassembler();
  if (!tool) throw DisassembleError(std::string(kNoDisassemblerHint));
  return disassemble(cubin, *tool);
}

}  // namespace tessera::runtime
