//===- NDArrayTest.cpp - Host arrays, comparison helpers -------------------===//
#include "tessera/runtime/NDArray.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tessera/support/Error.h"

namespace tessera::runtime {
namespace {

using ir::DataType;

TEST(NDArray, GetSetPerDtype) {
  NDArray h(DataType::float16(), {3});
  h.set(0, 0.1);
  EXPECT_EQ(h.get(0), 0.0999755859375);
  EXPECT_EQ(h.nbytes(), 6u);
  NDArray i8(DataType::int_(8), {2});
  i8.set(0, 200);  // wraps
  EXPECT_EQ(i8.get_int(0), -56);
  i8.set(1, -3.7);  // truncates
  EXPECT_EQ(i8.get_int(1), -3);
  NDArray u64(DataType::uint(64), {1});
  u64.set_int(0, -1);
  EXPECT_EQ(u64.get(0), 18446744073709551615.0);
  NDArray b(DataType::bool_(), {2});
  b.set(1, 5);
  EXPECT_EQ(b.get_int(1), 1);
  EXPECT_THROW(b.get(2), UserError);
  NDArray s(DataType::float32(), {});
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.type_str(), "float32[]");
}

TEST(NDArray, FillRandomRangesAndNeverZero) {
  std::mt19937_64 rng(1);
  for (DataType t : {DataType::float32(), DataType::float16(), DataType::bfloat16(), DataType::float64(),
                     DataType::int_(8), DataType::int32(), DataType::uint(8), DataType::uint(64), DataType::bool_()}) {
    NDArray a(t, {64, 3});
    a.fill_random(rng);
    bool nonzero = false;
    for (int64_t i = 0; i < a.numel(); ++i) {
      double v = a.get(i);
      nonzero |= v != 0;
      if (t.is_float()) {
        EXPECT_GE(v, -1.0);
        EXPECT_LE(v, 1.0);  // rounding may reach 1
      } else if (t.is_int()) {
        EXPECT_GE(v, -8);
        EXPECT_LT(v, 8);
      } else {
        EXPECT_GE(v, 0);
        EXPECT_LT(v, 16);
      }
    }
    EXPECT_TRUE(nonzero) << t.str();
  }
  // A single bool element that happens to be false is forced to true.
  for (uint64_t seed = 0; seed < 8; ++seed) {
    std::mt19937_64 r(seed);
    NDArray one(DataType::bool_(), {1});
    one.fill_random(r);
    EXPECT_EQ(one.get_int(0), 1);
  }
}

TEST(NDArray, SummaryFormat) {
  NDArray a(DataType::float32(), {2, 2});
  a.set(0, 3);
  a.set(1, -4);
  EXPECT_EQ(a.summary("A"), "A float32[2, 2] l2=5 max=4 mean=-0.25");
  NDArray b(DataType::float32(), {3});
  b.set(0, 1.0 / 3);
  EXPECT_EQ(b.summary("B"), "B float32[3] l2=0.333333 max=0.333333 mean=0.111111");
}

TEST(NDArray, CompareHelpers) {
  NDArray a(DataType::float32(), {3}), b(DataType::float32(), {3});
  for (int i = 0; i < 3; ++i) {
    a.set(i, i + 1.0);
    b.set(i, i + 1.0);
  }
  EXPECT_EQ(max_rel_error(a, b), 0.0);
  EXPECT_TRUE(allclose(a, b, 0, 0));
  a.set(2, 3.003);
  EXPECT_NEAR(max_rel_error(a, b), 1e-3, 1e-6);
  EXPECT_TRUE(allclose(a, b, 2e-3, 0));
  EXPECT_FALSE(allclose(a, b, 5e-4, 0));
  a.set(0, std::numeric_limits<double>::quiet_NaN());
  EXPECT_FALSE(allclose(a, b, 1, 1));
  b.set(0, std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(allclose(a, b, 2e-3, 0));  // NaN equals NaN
  EXPECT_THROW(max_rel_error(a, NDArray(DataType::float32(), {4})), UserError);
  EXPECT_FALSE(allclose(a, NDArray(DataType::float32(), {4}), 1, 1));
}

TEST(NDArray, DataStartsACacheLine) {
  // Large arrays included: malloc starts those 16 bytes into a page.
  for (int64_t n : {1, 3, 1000, 1 << 20}) {
    NDArray a(DataType::int_(8), {n});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 64, 0u) << n;
    NDArray copy = a;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(copy.data()) % 64, 0u) << n;
  }
}

// Sizes no machine can hold are refused before anything is allocated: a count
// that overflows 64 bits (it was a segfault), and more than this machine has.
TEST(NDArray, SizesThatOverflowOrDoNotFitAreRefused) {
  auto message = [](auto &&make) {
    try {
      make();
    } catch (const UserError &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([] { NDArray(DataType::float16(), {int64_t(1) << 62, 2}); })
                .find("an array of float16[4611686018427387904, 2] has more elements than a 64-bit count holds"),
            std::string::npos);
  EXPECT_NE(message([] { NDArray(DataType::float32(), {int64_t(1) << 62}); }).find("has more bytes than"),
            std::string::npos);
  // 2^62 x 2 x 0: no elements at all.
  EXPECT_EQ(NDArray(DataType::float32(), {int64_t(1) << 62, 2, 0}).numel(), 0);
  EXPECT_NE(message([] { NDArray(DataType::float32(), {int64_t(1) << 50}); })
                .find("an array of float32[1125899906842624]: 4.5 PB (4503599627370496 bytes) of memory needed; this "
                      "machine has"),
            std::string::npos);
  EXPECT_NE(message([] { NDArray::wrap(DataType::float16(), {int64_t(1) << 62, 4}, nullptr); }).find("64-bit"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera::runtime
