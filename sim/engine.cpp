// engine.cpp: the indexed 4-ary event heap and the firing loop (design in engine.hpp).
#include "sim/engine.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/assert.hpp"

namespace poolsim::sim {

EventId Engine::at_ns(std::int64_t t, Callback cb, void* ctx, std::uint64_t arg) {
  if (t < now_) throw std::logic_error("sim::Engine: event scheduled in the past");
  std::uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.push_back({});
  }
  Slot& s = slots_[slot];
  s.cb = cb;
  s.ctx = ctx;
  s.arg = arg;
  const std::uint32_t gen = s.gen;
  push({slot, next_seq(), t});
  return {slot, gen};
}

EventId Engine::reschedule(EventId& id, std::int64_t t, Callback cb, void* ctx, std::uint64_t arg) {
  if (!pending(id)) {
    id = {};
    return at_ns(t, cb, ctx, arg);
  }
  if (t < now_) throw std::logic_error("sim::Engine: event scheduled in the past");
  // First: a renumbering may move the entries (its fired top goes).
  const std::uint32_t seq = next_seq();
  const std::uint32_t slot = id.slot;
  id = {};
  Slot& s = slots_[slot];
  ++s.gen;  // the old id no longer refers to it
  s.cb = cb;
  s.ctx = ctx;
  s.arg = arg;
  const std::uint32_t gen = s.gen;
  const std::size_t i = s.pos;
  const Entry e{slot, seq, t};
  // The new key may come before or after the old one: sift either way.
  if (i > 0 && before(e, heap_[(i - 1) / 4]))
    sift_up(i, e);
  else
    sift_down(i, e);
  return {slot, gen};
}

void Engine::horizon_exceeded(Duration d) const {
  throw HorizonExceeded("the simulated clock would pass 292 years (int64 nanoseconds): an event " +
                        std::to_string(d.count()) + "ns after t=" + std::to_string(now_) +
                        "ns; the scenario's times are too long to simulate");
}

bool Engine::cancel(EventId& id) {
  const bool was = pending(id);
  if (was) {
    remove_at(slots_[id.slot].pos);
    release(id.slot);
  }
  id = {};
  return was;
}

// Gives the pending entries the sequence numbers 0..n-1 in their (time,
// sequence) order. Their order is unchanged, so the heap stays a heap and
// every later event still fires after the earlier ones at its time: only the
// numbers change, once per 2^32 events scheduled. The fired top goes first
// (its number is not pending any more).
void Engine::renumber() {
  if (top_fired_) drop_fired_top();
  std::vector<std::uint32_t> order(heap_.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [this](std::uint32_t a, std::uint32_t b) { return before(heap_[a], heap_[b]); });
  for (std::uint32_t rank = 0; rank < order.size(); ++rank) heap_[order[rank]].set_seq(rank);
  seq_ = order.size();
  POOLSIM_ASSERT(seq_ < seq_limit_, "more pending events than sequence numbers");
}

void Engine::push(const Entry& e) {
  if (top_fired_) {
    // The fired top is still in place: overwrite it and sift down once
    // instead of removing it and sifting the new entry up.
    top_fired_ = false;
    sift_down(0, e);
    return;
  }
  const std::size_t i = heap_.size();
  heap_.push_back(e);
  sift_up(i, e);
}

void Engine::sift_up(std::size_t i, const Entry& e) {
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!before(e, heap_[parent])) break;
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, e);
}

// Removes the pending entry at i (never the fired top: a fired event's slot
// is no longer pending). The fired top, if any, stays the root: every
// pending entry is after it.
void Engine::remove_at(std::size_t i) {
  const Entry last = heap_.back();
  heap_.pop_back();
  if (i == heap_.size()) return;
  if (i > 0 && before(last, heap_[(i - 1) / 4]))
    sift_up(i, last);
  else
    sift_down(i, last);
}

void Engine::drop_fired_top() {
  top_fired_ = false;
  const Entry last = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0, last);
}

void Engine::sift_down(std::size_t i, const Entry& last) {
  const std::size_t n = heap_.size();
  for (;;) {
    const std::size_t c = 4 * i + 1;
    if (c >= n) break;
    std::size_t best;
    if (c + 4 <= n) {
      // Four children: two independent pairs, then their winners.
      best = earlier(earlier(c, c + 1), earlier(c + 2, c + 3));
    } else {
      best = c;
      for (std::size_t j = c + 1; j < n; ++j) best = earlier(best, j);
    }
    if (!before(heap_[best], last)) break;
    place(i, heap_[best]);
    i = best;
  }
  place(i, last);
}

bool Engine::step() {
  if (top_fired_) drop_fired_top();
  if (!heap_.empty()) {
    const Entry e = heap_[0];
    Slot& s = slots_[e.slot()];
    top_fired_ = true;  // removed lazily: by the next push, or the next step
    POOLSIM_ASSERT(e.t >= now_, "simulated time goes back");
    now_ = e.t;
    Callback cb = s.cb;
    void* ctx = s.ctx;
    std::uint64_t arg = s.arg;
    release(e.slot());
    ++fired_;
    cb(ctx, arg);
    return true;
  }
  return false;
}

void Engine::run() {
  stopped_ = false;
  while (!stopped_ && step()) {
  }
}

}  // namespace poolsim::sim
