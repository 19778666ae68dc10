//===- tests/tune/DatabaseConcurrencyTest.cpp - Two processes appending at once ===//
//
// Two forked children append 200 records each, in batches of 1 to 9, to the
// same file, released at the same moment. Some records carry a long error
// text (20-60 KB, like a long compiler log), so a writer that split a batch into
// several writes (stdio buffering, one write per line without the lock) would
// interleave partial lines. Afterwards the file must hold exactly 400 valid
// records, no warnings, each writer's records complete and in its order.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <map>

#include "TuneTestUtil.h"

#include "tessera/tune/Database.h"

namespace tessera::test {
namespace {

using tuning::Database;
using tuning::Record;

constexpr int kRecordsPerWriter = 200;

Record numbered_record(const tuning::TuningKey &key, int writer, int index) {
  Record r = ok_record(key, 32 * (1 + index % 32), 1.0 + index);
  r.rule = "writer" + std::to_string(writer);
  r.config["index"] = index;
  if (index % 3 == 0) {
    r.status = tuning::RecordStatus::CompileError;
    r.time_us.reset();
    r.error = std::string(20000 + 997 * (index % 40), static_cast<char>('a' + writer));
  }
  return r;
}

/// The child's work; returns its exit status (0: every append succeeded).
int append_as_writer(const std::string &path, const tuning::TuningKey &key, int writer, int go_fd) {
  char go = 0;
  if (read(go_fd, &go, 1) != 1) return 2;
  try {
    Database db = Database::open(path);
    int index = 0;
    for (int batch = 1; index < kRecordsPerWriter; batch = batch % 9 + 1) {
      std::vector<Record> records;
      for (int i = 0; i < batch && index < kRecordsPerWriter; ++i)
        records.push_back(numbered_record(key, writer, index++));
      db.append(std::move(records));
    }
    return 0;
  } catch (const std::exception &e) {
    fprintf(stderr, "writer %d: %s\n", writer, e.what());
    return 1;
  }
}

TEST(TuningDatabaseConcurrency, TwoProcessesAppendingNeverInterleave) {
  ScratchDir dir;
  std::string path = dir.file("shared.jsonl");
  tuning::TuningKey key = tuning::TuningKey::of(add_func(), Arch::by_name("h100"),
                                            {.nvrtc = "13.0", .driver = "13.0", .tessera = "0.1.0"});
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  std::vector<pid_t> children;
  for (int writer = 0; writer < 2; ++writer) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(go[1]);
      _exit(append_as_writer(path, key, writer, go[0]));
    }
    children.push_back(pid);
  }
  close(go[0]);
  ASSERT_EQ(write(go[1], "xx", 2), 2);  // release both at once
  close(go[1]);
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "writer status " << status;
  }

  Database db = Database::open(path);
  EXPECT_TRUE(db.warnings().empty()) << db.warnings()[0].str(path);
  ASSERT_EQ(db.records().size(), 2u * kRecordsPerWriter);
  std::map<std::string, std::vector<int>> order;
  for (const Record &r : db.records()) {
    int index = r.config["index"].get<int>();
    order[r.rule].push_back(index);
    Record expected = numbered_record(key, r.rule == "writer0" ? 0 : 1, index);
    expected.timestamp = r.timestamp;
    expected.git = r.git;
    EXPECT_EQ(r, expected) << r.rule << " record " << index;
  }
  std::vector<int> in_order(kRecordsPerWriter);
  for (int i = 0; i < kRecordsPerWriter; ++i) in_order[i] = i;
  EXPECT_EQ(order["writer0"], in_order);
  EXPECT_EQ(order["writer1"], in_order);
  // The two writers' batches really alternated in the file (not one after the other).
  size_t switches = 0;
  for (size_t i = 1; i < db.records().size(); ++i)
    switches += db.records()[i].rule != db.records()[i - 1].rule;
  std::cout << "writer switches in the file: " << switches << "\n";
}

}  // namespace
}  // namespace tessera::test
