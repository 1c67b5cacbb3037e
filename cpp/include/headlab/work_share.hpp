// Sharing a pass's work between threads on a busy machine: items taken one at
// a time from a counter, and waiting that spins briefly, then sleeps.
// Threaded builds only: every multi-threaded pass in HeadLab shares its work this
// way (ParallelMha, ParallelLmRunner, the pretrained models' PretrainedPool).
//
// A thread waiting for a condition another thread makes true (a new pass, the
// other thread's last item) first re-checks it kSpinWaitTries times (one atomic
// load each: some tens of microseconds), which covers the gap between calls a
// caller makes back to back without a wake-up through the scheduler, then
// sleeps on a condition variable. The waker makes its change with a seq_cst
// store or read-modify-write, then calls wake_sleepers(): a sleeper counts
// itself in (seq_cst) under the mutex before it re-checks and sleeps, so one of
// the two always sees the other's write and no wake-up is lost (the predicate's
// loads are seq_cst too).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace headlab::threads {

constexpr int kSpinWaitTries = 1 << 16;

// A counter on a cache line of its own: counters the threads update all the
// time do not share a line with anything else (no false sharing).
template <class T>
struct alignas(64) Line {
  std::atomic<T> value{0};
};

struct Sleepers {
  std::mutex mutex;
  std::condition_variable cv;
  Line<std::uint32_t> count;  // threads asleep on cv, or about to be
};

// The items of the pass being run, taken by compare-and-swap on one word:
// generation (24 bits) | item count (20 bits) | next item (20 bits). Count and
// generation travel in the same word as the index, so a thread that wakes late
// for a pass that has ended takes nothing, whatever the next pass holds.
class WorkCounter {
 public:
  static constexpr std::size_t kMaxItems = (std::size_t{1} << 20) - 1;

  // Starts a pass of `items` (<= kMaxItems) items; its generation. Whatever the
  // threads read for the pass must be written before (this store is seq_cst).
  std::uint32_t begin(std::size_t items) {
    const std::uint32_t g = (generation() + 1) & 0xffffffu;
    word_.value.store(std::uint64_t{g} << 40 | std::uint64_t{items} << 20);
    return g;
  }

  // seq_cst: waiters read it in spin_then_wait's predicate (see above).
  std::uint32_t generation() const { return static_cast<std::uint32_t>(word_.value.load() >> 40); }

  // Takes the next item of pass `generation`; false when none is left (or another pass began).
  bool claim(std::uint32_t generation, std::size_t& item) {
    std::uint64_t w = word_.value.load(std::memory_order_acquire);
    for (;;) {
      const std::uint64_t next = w & 0xfffffu, count = (w >> 20) & 0xfffffu;
      if ((w >> 40) != generation || next >= count) return false;
      if (word_.value.compare_exchange_weak(w, w + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
        item = static_cast<std::size_t>(next);
        return true;
      }
    }
  }

 private:
  Line<std::uint64_t> word_;
};

// Returns once ready() holds.
template <class Ready>
void spin_then_wait(Sleepers& s, Ready ready) {
  for (int i = 0; i < kSpinWaitTries; ++i)
    if (ready()) return;
  std::unique_lock<std::mutex> lock(s.mutex);
  s.count.value.fetch_add(1);
  s.cv.wait(lock, ready);
  s.count.value.fetch_sub(1);
}

// After a seq_cst change a waiter may wait for: wakes every sleeper, if any.
inline void wake_sleepers(Sleepers& s) {
  if (s.count.value.load() == 0) return;
  std::lock_guard<std::mutex> lock(s.mutex);
  s.cv.notify_all();
}

}  // namespace headlab::threads
