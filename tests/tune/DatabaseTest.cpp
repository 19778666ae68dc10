//===- tests/tune/DatabaseTest.cpp - The JSON-lines file: round trip, lookup, damage ===//
#include <gtest/gtest.h>

#include <algorithm>

#include "TuneTestUtil.h"

#include "tessera/support/Version.h"
#include "tessera/tune/Database.h"

namespace tessera::test {
namespace {

using tuning::Database;
using tuning::Json;
using tuning::Record;
using tuning::RecordStatus;
using tuning::TuningKey;

const tuning::Toolchain kToolchain{.nvrtc = "13.0", .driver = "13.0", .tessera = "0.1.0"};

TuningKey key_of(const AddSpec &spec, const char *arch = "h100") {
  return TuningKey::of(add_func(spec), Arch::by_name(arch), kToolchain);
}

size_t count_lines(const std::string &text) {
  return std::count(text.begin(), text.end(), '\n');
}

TEST(TuningDatabase, MissingFileIsEmptyAndAppendCreatesIt) {
  ScratchDir dir;
  Database db = Database::open(dir.file("new.jsonl"));
  EXPECT_TRUE(db.records().empty());
  EXPECT_TRUE(db.warnings().empty());
  db.append({ok_record(key_of({}), 256, 4.5)});
  EXPECT_EQ(count_lines(read_text(dir.file("new.jsonl"))), 1u);
}

TEST(TuningDatabase, RecordsRoundTripThroughTheFile) {
  ScratchDir dir;
  std::string path = dir.file("db.jsonl");
  TuningKey key = key_of({});
  Record ok = ok_record(key, 128, 3.25);
  ok.workload = tuning::workload_summary(add_func());
  Record failed{.key = key,
                .rule = "elementwise",
                .config = ok.config,
                .status = RecordStatus::CompileError,
                .error = "line 1: error: \"x\" is undefined\n\tsecond line",
                .timestamp = "2025-06-01T12:00:00Z",
                .git = "abc"};
  Database db = Database::open(path);
  db.append({ok, failed});

  Database back = Database::open(path);
  EXPECT_TRUE(back.warnings().empty());
  ASSERT_EQ(back.records().size(), 2u);
  EXPECT_EQ(back.records(), db.records());
  // append stamped the time and the build's commit where they were empty.
  EXPECT_FALSE(back.records()[0].timestamp.empty());
  EXPECT_EQ(back.records()[0].git, std::string(tessera::git_hash()));
  EXPECT_EQ(back.records()[1].timestamp, "2025-06-01T12:00:00Z");
  EXPECT_EQ(back.records()[1].git, "abc");
  // One line per record, even with a newline inside the error text.
  EXPECT_EQ(count_lines(read_text(path)), 2u);
}

TEST(TuningDatabase, ToJsonWritesTheDocumentedFieldsInOrder) {
  Record r = ok_record(key_of({}), 64, 2.0);
  r.timestamp = "2025-06-01T12:00:00Z";
  std::vector<std::string> fields;
  Json j = r.to_json();
  for (const auto &[name, value] : j.items()) fields.push_back(name);
  EXPECT_EQ(fields, (std::vector<std::string>{"key", "rule", "config", "status", "time_us", "timestamp"}));
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(Record::from_json(j), r);
}

TEST(TuningDatabase, BestIsTheFastestOkRecordOfExactlyThatKey) {
  ScratchDir dir;
  TuningKey h100 = key_of({}), a100 = key_of({}, "a100"), other_shape = key_of({.rows = 32}),
            other_dtype = key_of({.dtype = "float16"});
  Database db = Database::open(dir.file("db.jsonl"));
  Record failed = ok_record(h100, 1024, 1.0);
  failed.status = RecordStatus::WrongAnswer;
  failed.time_us.reset();
  db.append({ok_record(h100, 256, 5.0), ok_record(h100, 128, 3.0), failed, ok_record(a100, 64, 1.0),
             ok_record(other_shape, 32, 0.5), ok_record(other_dtype, 512, 0.25), ok_record(h100, 512, 4.0)});

  Database back = Database::open(db.path());
  std::optional<Record> best = back.best(h100);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->config["threads"], 128);
  EXPECT_EQ(best->time_us, 3.0);
  EXPECT_EQ(back.best(a100)->config["threads"], 64);
  EXPECT_EQ(back.best(other_shape)->config["threads"], 32);
  EXPECT_EQ(back.best(other_dtype)->config["threads"], 512);
  EXPECT_EQ(back.records(h100).size(), 4u);  // the failure is kept too
  EXPECT_FALSE(back.best(key_of({}, "l4")));
  EXPECT_FALSE(back.best(key_of({.cols = 64})));
  TuningKey newer_nvrtc = h100;
  newer_nvrtc.nvrtc = "13.1";
  EXPECT_FALSE(back.best(newer_nvrtc));
}

TEST(TuningDatabase, BadLinesAreSkippedWithWarningsAndTheRestSurvive) {
  ScratchDir dir;
  std::string path = dir.file("db.jsonl");
  TuningKey key = key_of({});
  Database::open(path).append({ok_record(key, 32, 9.0)});
  Json good = Database::open(path).records()[0].to_json();
  auto without = [&](const char *field) {
    Json j = good;
    j.erase(field);
    return j.dump();
  };
  auto with = [&](const char *field, const Json &value) {
    Json j = good;
    j[field] = value;
    return j.dump();
  };
  Json bad_key = good;
  bad_key["key"]["workload"] = "XYZ";
  std::vector<std::pair<std::string, std::string>> bad = {
      {"{\"key\": {\"workload\"", "not valid JSON: "},
      // A number past double's range: nlohmann's out_of_range, not a
      // parse_error (found by the trace fuzzer in another reader).
      {"{\"key\": 1e999}", "not valid JSON: number overflow parsing '1e999'"},
      {"[1, 2]", "not a tuning record: expected a JSON object, got [1,2]"},
      {without("rule"), "not a tuning record: missing the field 'rule'"},
      {without("key"), "not a tuning record: missing the field 'key'"},
      {with("status", "fast"),
       "field 'status': expected one of ok, compile_error, launch_error, wrong_answer, "
       "skipped, got \"fast\""},
      {with("time_us", "12"), "field 'time_us': expected a positive number of microseconds, got \"12\""},
      {with("time_us", -1.0), "field 'time_us': expected a positive number"},
      {without("time_us"), "an \"ok\" record needs the field 'time_us'"},
      {with("config", 3), "field 'config': expected an object, got 3"},
      {bad_key.dump(), "field 'key.workload': expected 16 lower-case hex digits, got \"XYZ\""},
  };
  for (const auto &[line, reason] : bad) append_text(path, line + "\n");
  append_text(path, "\n");  // blank lines are not records and not warnings
  Database::open(path).append({ok_record(key, 64, 8.0)});

  Database db = Database::open(path);
  ASSERT_EQ(db.records().size(), 2u);
  EXPECT_EQ(db.records()[0].config["threads"], 32);
  EXPECT_EQ(db.records()[1].config["threads"], 64);
  ASSERT_EQ(db.warnings().size(), bad.size());
  for (size_t i = 0; i < bad.size(); ++i) {
    EXPECT_EQ(db.warnings()[i].line, static_cast<int>(i) + 2);
    EXPECT_NE(db.warnings()[i].reason.find(bad[i].second), std::string::npos) << db.warnings()[i].reason;
  }
  EXPECT_EQ(db.warnings()[3].str(path), path + ":5: skipped: not a tuning record: missing the field 'rule'");
}

TEST(TuningDatabase, TruncatedLastLineIsSkippedAndTheNextAppendStartsANewLine) {
  ScratchDir dir;
  std::string path = dir.file("db.jsonl");
  TuningKey key = key_of({});
  Database::open(path).append({ok_record(key, 32, 9.0), ok_record(key, 64, 7.0)});
  // An interrupted write: the first half of a record, no newline.
  std::string line = ok_record(key, 128, 1.0).to_json().dump();
  append_text(path, line.substr(0, line.size() / 2));

  Database damaged = Database::open(path);
  EXPECT_EQ(damaged.records().size(), 2u);
  ASSERT_EQ(damaged.warnings().size(), 1u);
  EXPECT_EQ(damaged.warnings()[0].line, 3);
  EXPECT_NE(damaged.warnings()[0].reason.find("the last line has no newline"), std::string::npos)
      << damaged.warnings()[0].reason;
  EXPECT_EQ(damaged.best(key)->time_us, 7.0);  // the half record's 1.0 is not believed

  damaged.append({ok_record(key, 256, 5.0)});
  Database repaired = Database::open(path);
  ASSERT_EQ(repaired.records().size(), 3u);
  EXPECT_EQ(repaired.records()[2].config["threads"], 256);
  ASSERT_EQ(repaired.warnings().size(), 1u);  // the half line, still skipped, now ended
  EXPECT_EQ(repaired.warnings()[0].line, 3);
  EXPECT_EQ(repaired.best(key)->time_us, 5.0);
}

TEST(TuningDatabase, WholeLastRecordWithoutNewlineIsKept) {
  ScratchDir dir;
  std::string path = dir.file("db.jsonl");
  Record r = ok_record(key_of({}), 32, 9.0);
  r.timestamp = "2025-06-01T12:00:00Z";
  append_text(path, r.to_json().dump());  // e.g. written by an editor
  Database db = Database::open(path);
  EXPECT_TRUE(db.warnings().empty());
  ASSERT_EQ(db.records().size(), 1u);
  db.append({ok_record(key_of({}), 64, 8.0)});
  EXPECT_EQ(Database::open(path).records().size(), 2u);
}

TEST(TuningDatabase, AppendRefusesARecordThatWouldNotReadBack) {
  ScratchDir dir;
  std::string path = dir.file("db.jsonl");
  Database db = Database::open(path);
  Record no_time = ok_record(key_of({}), 32, 1.0);
  no_time.time_us.reset();
  try {
    db.append({ok_record(key_of({}), 64, 2.0), no_time});
    FAIL() << "an ok record without a time was written";
  } catch (const tuning::DatabaseError &e) {
    EXPECT_NE(
        std::string(e.what()).find("record 1 of the batch is not valid: an \"ok\" record needs the field "
                                   "'time_us'"),
        std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(db.records().empty());
  EXPECT_TRUE(read_text(path).empty());  // nothing of the batch was written
}

TEST(TuningDatabase, UnusablePathsAreErrorsNamingThem) {
  ScratchDir dir;
  EXPECT_THROW(Database::open(dir.file("")), tuning::DatabaseError);  // a directory
  Database db = Database::open(dir.file("no/such/dir/db.jsonl"));
  try {
    db.append({ok_record(key_of({}), 32, 1.0)});
    FAIL() << "appended into a missing directory";
  } catch (const tuning::DatabaseError &e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("no/such/dir/db.jsonl") + ": cannot open for appending"),
              std::string::npos)
        << e.what();
  }
}

TEST(TuningDatabase, StatusNamesRoundTrip) {
  for (RecordStatus s : {RecordStatus::Ok, RecordStatus::CompileError, RecordStatus::LaunchError,
                         RecordStatus::WrongAnswer, RecordStatus::Skipped})
    EXPECT_EQ(tuning::parse_record_status(tuning::to_string(s)), s);
  EXPECT_EQ(std::string(tuning::to_string(RecordStatus::WrongAnswer)), "wrong_answer");
  EXPECT_FALSE(tuning::parse_record_status("OK"));
}

TEST(TuningDatabase, TimestampIsUtcIso8601) {
  std::string t = tuning::utc_timestamp();
  ASSERT_EQ(t.size(), 20u) << t;
  EXPECT_EQ(t[4], '-');
  EXPECT_EQ(t[10], 'T');
  EXPECT_EQ(t.back(), 'Z');
}

}  // namespace
}  // namespace tessera::test
