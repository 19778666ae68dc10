//===- Process.cpp - Running an external program with a deadline -----------===//
#include "Process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "tessera/runtime/Sass.h"

extern char **environ;

namespace tessera::runtime::detail {

namespace fs = std::filesystem;

TempFile::TempFile(const std::vector<uint8_t> &bytes, const std::string &suffix) {
  std::string pattern = (fs::temp_directory_path() / ("tessera-sass-XXXXXX" + suffix)).string();
  int fd = ::mkostemps(pattern.data(), int(suffix.size()), O_CLOEXEC);
  if (fd < 0)
    throw DisassembleError("cannot create a temporary file for the disassembler: " +
                           std::string(strerror(errno)));
  path_ = pattern;
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      throw DisassembleError("cannot write the disassembler's input to " + path_ + ": " + strerror(errno));
    }
    done += size_t(n);
  }
  ::close(fd);
}

TempFile::~TempFile() {
  if (!path_.empty()) ::unlink(path_.c_str());
}

namespace {

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

}  // namespace

ProcessResult run_process(const std::vector<std::string> &argv, double timeout_s) {
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

  ProcessResult f;
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
    if (n < 0 && errno != EINTR) {
      ::kill(-pid, SIGKILL);  // cannot wait for its output: do not wait for it either
      break;
    }
    if (n <= 0) continue;
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

namespace {

/// The first `n` lines of `text`, trailing blanks removed.
std::string first_lines(const std::string &text, int n) {
  size_t end = 0;
  for (int i = 0; i < n && end < text.size(); ++i) {
    size_t eol = text.find('\n', end);
    end = eol == std::string::npos ? text.size() : eol + 1;
  }
  std::string s = text.substr(0, end);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

}  // namespace

std::string process_failure(const std::string &command, const ProcessResult &f, double timeout_s) {
  if (f.timed_out) return fmt::format("{} ran longer than {:g} s and was killed", command, timeout_s);
  if (WIFSIGNALED(f.status))
    return fmt::format("{} was killed by signal {}: {}", command, WTERMSIG(f.status), first_lines(f.err, 5));
  if (WIFEXITED(f.status) && WEXITSTATUS(f.status) == 0) return "";
  std::string why = f.err.empty() ? std::string("no message") : first_lines(f.err, 5);
  return fmt::format("{} exited with status {}: {}", command, WEXITSTATUS(f.status), why);
}

}  // namespace tessera::runtime::detail
