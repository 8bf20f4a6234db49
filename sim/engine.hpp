// engine.hpp: the discrete-event engine of the simulator.
//
// Mechanism: a min-heap (4-ary, in one vector) of events ordered by
// (time, insertion sequence). Time is an integer number of nanoseconds, so
// arithmetic is exact; two events at the same instant fire in the order they
// were scheduled, which makes every run a pure function of its inputs
// (reproducibility rule, enforced in Engine::run: no other order exists).
// Like SimGrid's EngineImpl we keep one fixed order and no wall clock.
//
// Cancellation: an event lives in a slot with a generation number and its
// heap position; cancel() removes its entry from the heap at once (moved last
// entry sifted up or down) and bumps the generation, so the heap holds only
// pending events: a kernel that re-arms hundreds of CPUs per simulated
// millisecond does not sift through the entries it cancelled. reschedule()
// is cancel() and at() in one: the entry gets its new time and the next
// sequence number (the order a cancel then a new event would give) and
// moves in place. The fired top entry is removed lazily: when its handler
// schedules a successor (the common case), the successor overwrites the top
// and sinks once instead of a pop plus a push. An entry is 16 bytes (time,
// a 32-bit sequence number, slot) compared as one 128-bit number; the
// sequence numbers of the pending entries are renumbered 0..n-1 in their
// order before they would wrap, once per 2^32 events, which keeps every
// order.
//
// Lanes: an owner with one event at a time per unit (the kernel: one per
// CPU) asks for lanes; a lane holds at most one pending event, set (which
// replaces the pending one) or cancelled by id like any other. Lanes live in
// a winner tree (one 128-bit key per node, the leaves the lanes, a node the
// earlier of its two children), not in the heap: setting a lane rewrites the
// path from its leaf to the root, a fixed sequence of loads and
// compare-selects whose addresses do not depend on the keys, where a heap's
// sift-down picks its next address from the comparison before (perf: the
// heap was a quarter of a 256-CPU run, 248 instructions per event). Lanes
// take their sequence numbers from the same counter, and step() fires the
// earlier of the heap's top and the tree's root, so the order of events is
// the one a heap alone gives (test: random operations on both). A fired
// lane's leaf is cleared lazily, like the heap's top. EventId is two 32-bit words:
// no allocation per event, the callback is a plain function pointer plus
// context and argument, so scheduling allocates nothing once the vectors
// have grown.
//
// Invariants: now() never decreases; at(t) requires t >= now(); an EventId
// refers to at most one pending event.
// Left out: parallel simulation, event priorities beyond insertion order.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "models/units.hpp"

namespace poolsim::sim {

// A simulation that stops because it cannot finish within the simulator's
// bounds (the CLI's exit 3): the clock's range here, the event budget in
// sim/simulate.hpp.
struct SimulationRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The simulated clock would pass the int64 nanosecond range (the loader's
// horizon, kMaxDuration, keeps scenarios far below it; this is the backstop).
struct HorizonExceeded : SimulationRefused {
  using SimulationRefused::SimulationRefused;
};

struct EventId {
  static constexpr std::uint32_t kNone = 0xffffffffu;
  static constexpr std::uint32_t kLane = 0x80000000u;  // slot bit: a lane's event
  std::uint32_t slot = kNone;
  std::uint32_t gen = 0;
  bool valid() const { return slot != kNone; }
};

class Engine {
 public:
  using Callback = void (*)(void* ctx, std::uint64_t arg);

  Engine() = default;
  // For tests: sequence numbers are renumbered when `seq_limit` of them were
  // used (by default 2^32, the 32 bits an entry has for them).
  explicit Engine(std::uint64_t seq_limit) : seq_limit_(seq_limit) {}

  Duration now() const { return Duration{now_}; }
  std::int64_t now_ns() const { return now_; }

  // Schedules cb(ctx, arg) at absolute time t (t >= now()).
  EventId at(Duration t, Callback cb, void* ctx, std::uint64_t arg = 0) {
    return at_ns(t.count(), cb, ctx, arg);
  }
  EventId at_ns(std::int64_t t, Callback cb, void* ctx, std::uint64_t arg = 0);
  [[noreturn]] void horizon_exceeded(Duration d) const;
  // A delay that would carry the clock past int64 nanoseconds (292 years)
  // throws HorizonExceeded instead of wrapping.
  EventId after(Duration d, Callback cb, void* ctx, std::uint64_t arg = 0) {
    std::int64_t t = 0;
    if (__builtin_add_overflow(now_, d.count(), &t)) horizon_exceeded(d);
    return at_ns(t, cb, ctx, arg);
  }
  // Cancels a pending event; returns false if it already fired or was
  // cancelled. Resets id either way.
  bool cancel(EventId& id);
  // cancel(id), then at_ns(t, ...): the same order of events, in one move of
  // the heap entry when id is pending. Returns the new event's id. An id of
  // a lane's event sets that lane (at_lane), pending or not: a lane has one
  // owner, whose newest event it holds.
  EventId reschedule(EventId& id, std::int64_t t, Callback cb, void* ctx, std::uint64_t arg = 0);
  bool pending(EventId id) const {
    if (!id.valid()) return false;
    if (id.slot & EventId::kLane) {
      const std::uint32_t lane = id.slot & ~EventId::kLane;
      return lane < lanes_.size() && lanes_[lane].armed && lanes_[lane].gen == id.gen;
    }
    return id.slot < slots_.size() && slots_[id.slot].gen == id.gen;
  }

  // Adds n lanes; returns the first one's number (the others follow it).
  std::uint32_t add_lanes(std::uint32_t n);
  // Schedules cb(ctx, arg) at absolute time t (t >= now()) on `lane`,
  // replacing its pending event if any (a cancel, then a new event: the
  // next sequence number).
  EventId at_lane(std::uint32_t lane, std::int64_t t, Callback cb, void* ctx,
                  std::uint64_t arg = 0);
  // at_lane(now() + d): a delay past int64 nanoseconds throws HorizonExceeded.
  EventId after_lane(std::uint32_t lane, Duration d, Callback cb, void* ctx,
                     std::uint64_t arg = 0) {
    std::int64_t t = 0;
    if (__builtin_add_overflow(now_, d.count(), &t)) horizon_exceeded(d);
    return at_lane(lane, t, cb, ctx, arg);
  }

  // Fires events in (time, sequence) order until none is left or stop().
  void run();
  // Fires one event; false if none is pending.
  bool step();
  // Makes run() return after the current event.
  void stop() { stopped_ = true; }
  bool stopped() const { return stopped_; }

  std::uint64_t fired() const { return fired_; }
  std::size_t queued() const { return heap_.size() - (top_fired_ ? 1 : 0) + armed_lanes_; }

 private:
  __extension__ using U128 = unsigned __int128;
  // 16 bytes: four children in one cache line, moved in one instruction.
  // The sequence number (insertion order, renumbered before it would wrap)
  // and the slot share one word, so that an entry is two words to compare.
  struct Entry {
    std::uint64_t seq_slot;  // sequence << 32 | slot
    std::int64_t t;
    Entry(std::uint32_t slot, std::uint32_t seq, std::int64_t time)
        : seq_slot(static_cast<std::uint64_t>(seq) << 32 | slot), t(time) {}
    std::uint32_t slot() const { return static_cast<std::uint32_t>(seq_slot); }
    void set_seq(std::uint32_t seq) { seq_slot = static_cast<std::uint64_t>(seq) << 32 | slot(); }
  };
  struct Slot {
    Callback cb = nullptr;
    void* ctx = nullptr;
    std::uint64_t arg = 0;
    std::uint32_t gen = 0;
    std::uint32_t pos = 0;  // index of its entry in heap_ while pending
  };
  // An entry as one unsigned 128-bit number: time, sequence, slot, most
  // significant first. Times are never negative (now() starts at 0 and never
  // decreases) and no two pending entries share a sequence number, so its
  // order is the (time, sequence) order, and the compiler compares it with
  // a subtract and a borrow instead of two compares and their combination.
  static U128 key(const Entry& e) {
    return (static_cast<U128>(static_cast<std::uint64_t>(e.t)) << 64) | e.seq_slot;
  }
  static bool before(const Entry& a, const Entry& b) { return key(a) < key(b); }
  // The earlier of heap entries i and j, chosen by arithmetic, not a jump:
  // the order of a node's children is random, so a branch there would be
  // mispredicted half the time (perf put a quarter of a 256-CPU run in that
  // loop).
  std::size_t earlier(std::size_t i, std::size_t j) const {
    const std::size_t take_j = 0 - static_cast<std::size_t>(before(heap_[j], heap_[i]));
    return i ^ ((i ^ j) & take_j);
  }
  void place(std::size_t i, const Entry& e) {
    heap_[i] = e;
    slots_[e.slot()].pos = static_cast<std::uint32_t>(i);
  }
  void push(const Entry& e);
  // Puts e at index i, moving it towards the root / the leaves.
  void sift_up(std::size_t i, const Entry& e);
  void sift_down(std::size_t i, const Entry& e);
  void remove_at(std::size_t i);
  void drop_fired_top();
  // The next sequence number; renumbers the pending entries first when the
  // 32-bit numbers are used up.
  std::uint32_t next_seq() {
    if (seq_ == seq_limit_) renumber();
    return static_cast<std::uint32_t>(seq_++);
  }
  void renumber();
  // Lanes (see the header comment): tree_[1] is the root, tree_[leaf0_ + i]
  // lane i's key (kEmpty when it has none; else key() of an Entry whose
  // slot is the lane), tree_[k] the earlier of tree_[2k] and tree_[2k + 1].
  struct Lane {
    Callback cb = nullptr;
    void* ctx = nullptr;
    std::uint64_t arg = 0;
    std::uint32_t gen = 0;
    bool armed = false;  // holds a pending event
  };
  static constexpr U128 kEmpty = ~U128{0};  // after every key: times are below 2^63
  static constexpr std::uint32_t kNoLane = 0xffffffffu;
  // Rewrites the path from leaf node k to the root.
  void climb(std::size_t k) {
    U128 v = tree_[k];
    while (k > 1) {
      const U128 s = tree_[k ^ 1];
      v = s < v ? s : v;
      k >>= 1;
      tree_[k] = v;
    }
  }
  void clear_fired_lane() {
    tree_[leaf0_ + fired_lane_] = kEmpty;
    climb(leaf0_ + fired_lane_);
    fired_lane_ = kNoLane;
  }
  void rebuild_tree();
  void release(std::uint32_t slot) {
    ++slots_[slot].gen;
    free_.push_back(slot);
  }

  std::int64_t now_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t seq_limit_ = std::uint64_t{1} << 32;
  std::uint64_t fired_ = 0;
  bool stopped_ = false;
  // heap_[0] is an event that already fired and awaits removal: most
  // handlers schedule a successor, which then replaces it in one sift.
  bool top_fired_ = false;
  std::vector<Entry> heap_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_;
  std::vector<Lane> lanes_;
  std::vector<U128> tree_;
  std::size_t leaf0_ = 0;
  std::size_t armed_lanes_ = 0;
  std::uint32_t fired_lane_ = kNoLane;  // fired; its leaf still holds its key
};

}  // namespace poolsim::sim
