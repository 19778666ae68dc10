//===- tests/tune/StorageCrashTest.cpp - The database and the cache under kill -9 ===//
//
// Issue 39: a child process appends records to the tuning database (or
// stores kernels in the kernel cache) as fast as it can and reports each one
// on a pipe once the call returned; the parent kills it with SIGKILL at a
// random moment, 200 times over the same file (the same folder). After every
// kill the storage must read: every record (entry) reported written is
// there, whole; a torn last line is skipped with a warning; nothing else
// is lost or garbled.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <random>
#include <set>
#include <thread>

#include "TuneTestUtil.h"
#include "tessera/runtime/KernelCache.h"
#include "tessera/runtime/NVRTC.h"
#include "tessera/tune/Database.h"

namespace tessera::test {
namespace {

constexpr int kKills = 200;

/// Runs `work(id)` for ids first, first + 1, ... in a child, writing each id
/// to a pipe after it returned; once the first is reported, kills the child
/// after `delay` (so every child writes, and the kill lands mid-work);
/// returns the ids it reported.
template <typename Work>
std::vector<int> run_until_killed(int first, std::chrono::microseconds delay, Work work) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe");
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {
    close(fds[0]);
    for (int id = first;; ++id) {
      work(id);
      if (write(fds[1], &id, sizeof id) != sizeof id) _exit(3);
    }
  }
  close(fds[1]);
  std::vector<int> ids;
  int id = 0;
  if (read(fds[0], &id, sizeof id) == sizeof id) ids.push_back(id);
  std::this_thread::sleep_for(delay);
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  while (read(fds[0], &id, sizeof id) == sizeof id) ids.push_back(id);
  close(fds[0]);
  return ids;
}

tuning::Record record_of(const tuning::TuningKey &key, int id) {
  tuning::Record r = ok_record(key, 32 + id % 64, 1.0 + id);
  r.config["id"] = id;
  // Some records are long (a compiler log): a write that is cut is then likely.
  if (id % 4 == 0) r.error = std::string(4000 + 37 * (id % 100), 'x');
  return r;
}

TEST(StorageUnderKill, NoRecordReportedWrittenIsLost) {
  ScratchDir dir;
  const std::string path = dir.file("tuning.jsonl");
  const tuning::TuningKey key = tuning::TuningKey::of(add_func(), Arch::by_name("h100"),
                                                      {.nvrtc = "13.0", .driver = "13.0", .tessera = "0.1.0"});
  std::mt19937 rng(39);
  std::set<int> reported;
  size_t torn = 0;
  int next = 0;
  for (int kill_no = 0; kill_no < kKills; ++kill_no) {
    // An append is an fsync: the kill comes within 5 ms of the first.
    std::vector<int> ids = run_until_killed(next, std::chrono::microseconds(rng() % 5000), [&](int id) {
      tuning::Database db = tuning::Database::open(path);
      db.append({record_of(key, id)});
    });
    reported.insert(ids.begin(), ids.end());
    next += 100000;  // each child's ids apart from the others'
    // The file reads after every kill, and holds every reported record whole.
    tuning::Database db = tuning::Database::open(path);
    std::set<int> found;
    for (const tuning::Record &r : db.records()) {
      const int id = r.config["id"].get<int>();
      tuning::Record want = record_of(key, id);
      want.timestamp = r.timestamp, want.git = r.git;
      ASSERT_EQ(r, want) << "record " << id << " after kill " << kill_no;
      found.insert(id);
    }
    for (int id : reported) ASSERT_TRUE(found.count(id)) << "record " << id << " was reported written, then lost";
    torn = db.warnings().size();
  }
  // A torn line is at most one per kill.
  EXPECT_LE(torn, size_t(kKills));
  std::cout << kKills << " kills, " << reported.size() << " records reported written, all kept; " << torn
            << " torn lines skipped with a warning\n";
  EXPECT_GE(reported.size(), size_t(kKills));  // every child wrote
}

runtime::CompileResult kernel_of(int id) {
  runtime::CompileResult r;
  r.name = "k" + std::to_string(id);
  r.arch = "sm_90";
  std::mt19937 bytes(id);
  r.cubin = {0x7f, 'E', 'L', 'F'};
  r.cubin.resize(2000 + 13 * (id % 300));
  for (size_t i = 4; i < r.cubin.size(); ++i) r.cubin[i] = uint8_t(bytes());
  r.log = "ptxas info: kernel " + std::to_string(id);
  return r;
}

TEST(StorageUnderKill, NoKernelStoredInTheCacheIsLostOrTorn) {
  ScratchDir dir;
  std::mt19937 rng(7);
  std::set<int> reported, in_flight;
  int next = 0;
  for (int kill_no = 0; kill_no < kKills; ++kill_no) {
    std::vector<int> ids = run_until_killed(next, std::chrono::microseconds(rng() % 3000), [&](int id) {
      runtime::KernelCache cache(dir.file("kernels"));
      cache.store("key" + std::to_string(id), kernel_of(id));
    });
    reported.insert(ids.begin(), ids.end());
    in_flight.insert(ids.empty() ? next : ids.back() + 1);  // being stored when the kill came
    next += 100000;
  }
  runtime::KernelCache cache(dir.file("kernels"));
  size_t kept = 0;
  for (int id : reported) {
    std::optional<runtime::CompileResult> got = cache.load("key" + std::to_string(id), "sm_90");
    ASSERT_TRUE(got) << "kernel " << id << " was reported stored, then lost";
    EXPECT_EQ(got->cubin, kernel_of(id).cubin) << id;
    ++kept;
  }
  // An entry the kill cut short is never read back torn: it is whole or missing.
  size_t cut = 0;
  for (int id : in_flight) {
    std::optional<runtime::CompileResult> got = cache.load("key" + std::to_string(id), "sm_90");
    if (got) EXPECT_EQ(got->cubin, kernel_of(id).cubin) << id;
    cut += !got;
  }
  std::cout << cut << " of the " << in_flight.size() << " kernels in flight at a kill are missing, none torn\n";
  std::cout << kKills << " kills, " << kept << " kernels reported stored, all read back whole\n";
  EXPECT_GE(kept, size_t(kKills));
}

}  // namespace
}  // namespace tessera::test
