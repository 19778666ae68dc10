//===- lib/tune/MeasureWorker.cpp - Candidates measured in a worker process -===//
#include "MeasureWorker.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "Measure.h"
#include "tessera/support/Error.h"

extern char **environ;

namespace tessera::tuning {

using nlohmann::json;

namespace {

constexpr const char *kWorkerName = "tessera-measure-worker";

bool is_program(const std::filesystem::path &p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

/// The folder of the program or shared library this code was linked into.
std::filesystem::path folder_of_this_code() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void *>(&folder_of_this_code), &info) && info.dli_fname && *info.dli_fname) {
    std::error_code ec;
    std::filesystem::path p = std::filesystem::canonical(info.dli_fname, ec);
    if (!ec) return p.parent_path();
  }
  return {};
}

UserError system_error(const char *call) {
  return UserError(fmt::format("cannot start the measuring worker: {} failed: {}", call, std::strerror(errno)));
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status))
    return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return fmt::format("ended (wait status {})", status);
}

}  // namespace

std::optional<std::filesystem::path> find_measure_worker(std::string *looked) {
  if (const char *env = std::getenv("TESSERA_MEASURE_WORKER"); env && *env) {
    if (is_program(env)) return std::filesystem::path(env);
    throw UserError(fmt::format("TESSERA_MEASURE_WORKER={} is not a program", env));
  }
  std::vector<std::filesystem::path> places;
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  for (const std::filesystem::path &dir : {folder_of_this_code(), ec ? std::filesystem::path() : exe.parent_path()}) {
    if (dir.empty()) continue;
    places.push_back(dir / kWorkerName);
    places.push_back(dir.parent_path() / "libexec" / "tessera" / kWorkerName);
  }
#ifdef TESSERA_MEASURE_WORKER_INSTALL_PATH
  places.emplace_back(TESSERA_MEASURE_WORKER_INSTALL_PATH);
#endif
#ifdef TESSERA_MEASURE_WORKER_BUILD_PATH
  places.emplace_back(TESSERA_MEASURE_WORKER_BUILD_PATH);
#endif
  for (const std::filesystem::path &p : places)
    if (is_program(p)) return p;
  if (looked) {
    std::vector<std::string> names;
    for (const std::filesystem::path &p : places) names.push_back(p.string());
    *looked = fmt::format("{}", fmt::join(names, ", "));
  }
  return std::nullopt;
}

WorkerMeasurer::WorkerMeasurer(std::filesystem::path program, MeasureContext ctx, std::vector<CandidateSpec> specs,
                               std::vector<double> timeouts_ms, double start_timeout_ms)
    : program_(std::move(program)),
      ctx_(std::move(ctx)),
      context_json_(to_json(ctx_)),
      specs_(std::move(specs)),
      timeouts_ms_(std::move(timeouts_ms)),
      start_timeout_ms_(start_timeout_ms) {}

WorkerMeasurer::~WorkerMeasurer() {
  if (proc_.pid > 0) {
    ::close(proc_.channel);  // the worker's end of file: it exits
    proc_.channel = -1;
    for (int i = 0; i < 100; ++i) {
      if (::waitpid(proc_.pid, nullptr, WNOHANG) == proc_.pid) {
        proc_.pid = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (proc_.pid > 0) end_worker(true);
  }
  if (proc_.errors >= 0) ::close(proc_.errors);
}

void WorkerMeasurer::spawn() {
  int sv[2], err[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw system_error("socketpair");
  if (::pipe2(err, O_CLOEXEC) != 0) {
    UserError e = system_error("pipe2");
    ::close(sv[0]), ::close(sv[1]);
    throw e;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, sv[1], 0);
  posix_spawn_file_actions_adddup2(&actions, sv[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  std::string parent = std::to_string(::getpid());
  std::string path = program_.string();
  char *argv[] = {path.data(), parent.data(), nullptr};
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, path.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(sv[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(sv[0]), ::close(err[0]);
    throw UserError(fmt::format("cannot start the measuring worker {}: {}", path, std::strerror(rc)));
  }
  ::fcntl(err[0], F_SETFL, ::fcntl(err[0], F_GETFL) | O_NONBLOCK);
  if (proc_.errors >= 0) ::close(proc_.errors);
  proc_ = {.pid = pid, .channel = sv[0], .errors = err[0]};
  pending_.clear();
  ++started_;
}

void WorkerMeasurer::drain_errors() {
  if (proc_.errors < 0) return;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(proc_.errors, buf, sizeof buf)) > 0) {
    stderr_tail_.append(buf, size_t(n));
    if (stderr_tail_.size() > 2048) stderr_tail_.erase(0, stderr_tail_.size() - 2048);
  }
}

std::string WorkerMeasurer::end_worker(bool kill) {
  if (proc_.pid <= 0) return "";
  if (kill) ::kill(proc_.pid, SIGKILL);
  int status = 0;
  pid_t r;
  // A worker whose socket closed is ending; one that does not end within 2 s is killed.
  auto deadline = Clock::now() + std::chrono::seconds(2);
  while ((r = ::waitpid(proc_.pid, &status, WNOHANG)) == 0 && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (r == 0) {
    ::kill(proc_.pid, SIGKILL);
    r = ::waitpid(proc_.pid, &status, 0);
  }
  drain_errors();
  if (proc_.channel >= 0) ::close(proc_.channel);
  proc_.pid = -1;
  proc_.channel = -1;
  return r == proc_.pid || r > 0 ? describe_exit(status) : "gone";
}

WorkerMeasurer::Outcome WorkerMeasurer::exchange(const json &request, double timeout_ms, json &answer,
                                                 std::string &why) {
  std::string line = request.dump() + "\n";
  for (size_t sent = 0; sent < line.size();) {
    ssize_t n = ::send(proc_.channel, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      why = "the worker " + end_worker(false);
      return Outcome::Died;
    }
    sent += size_t(n);
  }
  auto deadline = Clock::now() + std::chrono::duration<double, std::milli>(timeout_ms);
  while (true) {
    if (size_t nl = pending_.find('\n'); nl != std::string::npos) {
      std::string text = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      try {
        answer = json::parse(text);
        return Outcome::Answered;
      } catch (const json::exception &e) {
        why = fmt::format("the worker answered what is not JSON ({}): {}", e.what(), text.substr(0, 200));
        end_worker(true);
        return Outcome::Died;
      }
    }
    double left = std::chrono::duration<double, std::milli>(deadline - Clock::now()).count();
    if (left <= 0) {
      end_worker(true);
      why = fmt::format("no answer within {:.0f} ms: the watchdog killed the worker", timeout_ms);
      return Outcome::TimedOut;
    }
    pollfd fds[2] = {{proc_.channel, POLLIN, 0}, {proc_.errors, POLLIN, 0}};
    int rc = ::poll(fds, 2, int(std::min(left, 1000.0)) + 1);
    if (rc < 0 && errno != EINTR) {
      why = fmt::format("poll failed: {}", std::strerror(errno));
      end_worker(true);
      return Outcome::Died;
    }
    if (fds[1].revents) drain_errors();
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char buf[65536];
      ssize_t n = ::recv(proc_.channel, buf, sizeof buf, 0);
      if (n > 0) {
        pending_.append(buf, size_t(n));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        why = "the worker " + end_worker(false);
        return Outcome::Died;
      }
    }
  }
}

void WorkerMeasurer::ensure_worker() {
  if (proc_.pid > 0) return;
  stderr_tail_.clear();
  spawn();
  json answer;
  std::string why;
  Outcome o = exchange(json{{"op", "start"}, {"context", context_json_}}, start_timeout_ms_, answer, why);
  if (o == Outcome::Answered && answer.value("ok", false)) {
    reference_how_ = answer.value("reference", "");
    reference_ms_ = answer.value("reference_ms", 0.0);
    return;
  }
  std::string reason = o == Outcome::Answered ? answer.value("error", std::string("no reason given")) : why;
  end_worker(true);
  drain_errors();
  std::string tail = stderr_tail_.empty() ? "" : "; its last words: " + stderr_tail_;
  throw UserError(fmt::format("the measuring worker could not start: {}{}", reason, tail));
}

void WorkerMeasurer::start() { ensure_worker(); }

Measurement WorkerMeasurer::measure(size_t index) {
  Measurement m;
  try {
    ensure_worker();
  } catch (const Error &e) {
    m.status = CandidateStatus::LaunchError;
    m.error = e.what();
    return m;
  }
  json answer;
  std::string why;
  stderr_tail_.clear();
  Outcome o = exchange(json{{"op", "measure"}, {"index", index}, {"candidate", to_json(specs_.at(index))}},
                       timeouts_ms_.at(index), answer, why);
  if (o == Outcome::Answered && answer.value("ok", false)) {
    try {
      m = measurement_from_json(answer.at("measurement"));
    } catch (const json::exception &e) {
      m.status = CandidateStatus::InternalError;
      m.error = fmt::format("internal error (a bug in tessera): the worker's answer does not read: {}", e.what());
    }
    if (m.fatal) end_worker(false);
    return m;
  }
  if (o == Outcome::Answered) {
    // The worker could not even try (the candidate did not read back): a bug.
    m.status = CandidateStatus::InternalError;
    m.error = "internal error (a bug in tessera): " + answer.value("error", std::string("the worker refused"));
    return m;
  }
  m.status = o == Outcome::TimedOut ? CandidateStatus::Timeout : CandidateStatus::LaunchError;
  std::string tail = stderr_tail_;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
  m.error = fmt::format("in the measuring worker: {}{}", why, tail.empty() ? "" : "; its last words: " + tail);
  m.fatal = true;
  return m;
}

std::optional<std::vector<double>> WorkerMeasurer::time_samples(size_t index, double budget_ms) {
  try {
    ensure_worker();
  } catch (const Error &) {
    return std::nullopt;
  }
  json answer;
  std::string why;
  Outcome o = exchange(json{{"op", "time"},
                            {"index", index},
                            {"candidate", to_json(specs_.at(index))},
                            {"budget_ms", budget_ms}},
                       timeouts_ms_.at(index) + 4 * budget_ms, answer, why);
  if (o != Outcome::Answered || !answer.value("ok", false)) return std::nullopt;
  return answer.at("samples_ms").get<std::vector<double>>();
}

std::string WorkerMeasurer::isolation() const {
  return fmt::format("worker ({} started)", started_);
}

}  // namespace tessera::tuning
