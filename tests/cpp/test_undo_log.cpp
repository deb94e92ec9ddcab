// The undo logs behind parallel loops that write elements and may stop (undo_log.h): what a
// body appends is undone exactly, last first, whatever the widths; a commit empties the
// logs and backs the records up; an abort restores the elements and the records.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/cpu/undo_log.h"

namespace {
using stagepy::backends::cpu::kUndoSizeShift;
using stagepy::backends::cpu::kUndoSlots;

// What a logging body does before a store of `width` bytes at `addr`.
void log_store(int64_t* slots, void* addr, int width) {
  if (slots[0] + 16 > slots[1]) ASSERT_EQ(stagepy_undo_grow(slots), 1);
  uint64_t old = 0;
  std::memcpy(&old, addr, (size_t)width);
  const int64_t code = width == 1 ? 0 : width == 2 ? 1 : width == 4 ? 2 : 3;
  int64_t* e = reinterpret_cast<int64_t*>(slots[0]);
  e[0] = reinterpret_cast<int64_t>(addr) | (code << kUndoSizeShift);
  e[1] = (int64_t)old;
  slots[0] += 16;
}

template <typename T>
void logged_store(int64_t* slots, T* at, T value) {
  log_store(slots, at, (int)sizeof(T));
  *at = value;
}

constexpr int64_t kSize = 8;  // i64 slots per record: the log, then 5 of the body's

TEST(UndoLog, AbortRestoresEveryWidthAndRepeatedStores) {
  std::vector<int64_t> records(2 * kSize, 0), backup(2 * kSize, 0);
  records[kUndoSlots] = 11;   // a reduction's part, say
  stagepy_undo_commit(records.data(), backup.data(), 2, kSize);
  int8_t b[3] = {1, 2, 3};
  int16_t h[2] = {-4, 5};
  float f[2] = {1.5f, -0.0f};
  double d[2000];
  for (int k = 0; k < 2000; k++) d[k] = k * 0.25;
  int64_t* t0 = records.data();
  int64_t* t1 = records.data() + kSize;
  logged_store<int8_t>(t0, &b[1], 9);
  logged_store<int8_t>(t0, &b[1], 10);  // twice: the first old value wins
  logged_store<int16_t>(t1, &h[0], 7);
  logged_store<float>(t1, &f[1], 3.0f);
  for (int k = 0; k < 2000; k++) logged_store<double>(k % 2 ? t1 : t0, &d[k], -1.0);
  for (int k = 0; k < 6000; k++) logged_store<double>(t0, &d[k % 7], (double)k);  // past 64 KB: grows
  records[kUndoSlots] = 99;
  records[kSize + kUndoSlots + 4] = 5;
  stagepy_undo_abort(records.data(), backup.data(), 2, kSize);
  EXPECT_EQ(b[0], 1);
  EXPECT_EQ(b[1], 2);
  EXPECT_EQ(b[2], 3);
  EXPECT_EQ(h[0], -4);
  EXPECT_EQ(h[1], 5);
  EXPECT_EQ(f[0], 1.5f);
  EXPECT_TRUE(f[1] == 0.0f && std::signbit(f[1]));
  for (int k = 0; k < 2000; k++) ASSERT_EQ(d[k], k * 0.25) << k;
  // The records as committed, the logs freed.
  EXPECT_EQ(records[kUndoSlots], 11);
  EXPECT_EQ(records[kSize + kUndoSlots + 4], 0);
  for (int r = 0; r < 2; r++)
    for (int s = 0; s < kUndoSlots; s++) EXPECT_EQ(records[r * kSize + s], 0);
}

TEST(UndoLog, CommitKeepsTheStoresAndStartsAnEmptyWindow) {
  std::vector<int64_t> records(kSize, 0), backup(kSize, 0);
  stagepy_undo_commit(records.data(), backup.data(), 1, kSize);
  double d[4] = {1, 2, 3, 4};
  logged_store<double>(records.data(), &d[0], 10.0);
  records[kUndoSlots + 1] = 42;
  stagepy_undo_commit(records.data(), backup.data(), 1, kSize);  // window 1 kept
  EXPECT_EQ(records[0], records[2]);                               // empty log, buffer kept
  EXPECT_NE(records[2], 0);
  EXPECT_EQ(backup[kUndoSlots + 1], 42);
  logged_store<double>(records.data(), &d[1], 20.0);
  logged_store<double>(records.data(), &d[0], 30.0);
  records[kUndoSlots + 1] = 43;
  stagepy_undo_abort(records.data(), backup.data(), 1, kSize);     // window 2 undone
  EXPECT_EQ(d[0], 10.0);
  EXPECT_EQ(d[1], 2.0);
  EXPECT_EQ(records[kUndoSlots + 1], 42);
}

TEST(UndoLog, ALogStopsGrowingAtItsLimit) {
  int64_t slots[kUndoSlots] = {0, 0, 0};
  int grows = 0;
  while (stagepy_undo_grow(slots) == 1) {
    slots[0] = slots[1];  // full again
    ASSERT_LT(++grows, 40);
  }
  EXPECT_EQ(slots[1] - slots[2], stagepy::backends::cpu::kUndoMaxBytes);
  std::vector<int64_t> rec(slots, slots + kUndoSlots);
  rec[0] = rec[2];
  stagepy_undo_free(rec.data(), 1, kUndoSlots);
  EXPECT_EQ(rec[2], 0);
}

}  // namespace

// A kernel's statement log (logged statements): the statements before the one that hands
// over were committed (the log emptied at each start); only that statement's stores are
// undone, and completion keeps them all.
TEST(UndoLog, StatementLogUndoesOnlyTheStatementThatHandsOver) {
  for (int32_t status : {0, 3}) {
    int64_t slots[kUndoSlots] = {0, 0, 0};
    double d[3] = {1, 2, 3};
    logged_store<double>(slots, &d[0], 10.0);  // statement 1, completed
    slots[0] = slots[2];                        // statement 2 starts: the log emptied
    logged_store<double>(slots, &d[1], 20.0);
    logged_store<double>(slots, &d[1], 21.0);
    logged_store<double>(slots, &d[2], 30.0);
    stagepy_undo_statement(slots, status);
    EXPECT_EQ(d[0], 10.0);
    EXPECT_EQ(d[1], status ? 2.0 : 21.0);
    EXPECT_EQ(d[2], status ? 3.0 : 30.0);
    for (int s = 0; s < kUndoSlots; s++) EXPECT_EQ(slots[s], 0);  // freed
  }
}
