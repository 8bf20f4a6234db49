// engine.cpp: the indexed 4-ary event heap and the firing loop (design in engine.hpp).
#include "sim/engine.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>
#include <utility>

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
    if (slot >= EventId::kLane) throw std::length_error("sim::Engine: too many pending events");
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

std::uint32_t Engine::add_lanes(std::uint32_t n) {
  const auto first = static_cast<std::uint32_t>(lanes_.size());
  if (n == 0) return first;
  if (lanes_.size() + n >= EventId::kLane) throw std::length_error("sim::Engine: too many lanes");
  if (fired_lane_ != kNoLane) clear_fired_lane();
  std::vector<U128> leaves(lanes_.size() + n, kEmpty);
  for (std::size_t i = 0; i < lanes_.size(); ++i) leaves[i] = tree_[leaf0_ + i];
  lanes_.resize(lanes_.size() + n);
  leaf0_ = std::bit_ceil(lanes_.size());
  tree_.assign(2 * leaf0_, kEmpty);
  std::copy(leaves.begin(), leaves.end(), tree_.begin() + static_cast<std::ptrdiff_t>(leaf0_));
  rebuild_tree();
  return first;
}

void Engine::rebuild_tree() {
  for (std::size_t k = leaf0_ - 1; k >= 1; --k) tree_[k] = std::min(tree_[2 * k], tree_[2 * k + 1]);
}

EventId Engine::at_lane(std::uint32_t lane, std::int64_t t, Callback cb, void* ctx,
                        std::uint64_t arg) {
  if (t < now_) throw std::logic_error("sim::Engine: event scheduled in the past");
  POOLSIM_ASSERT(lane < lanes_.size(), "an event on a lane nobody added");
  // First: a renumbering renumbers the lane's pending key too (and clears a
  // fired lane).
  const std::uint32_t seq = next_seq();
  Lane& l = lanes_[lane];
  if (fired_lane_ == lane) fired_lane_ = kNoLane;  // its leaf is overwritten now
  if (!l.armed) {
    l.armed = true;
    ++armed_lanes_;
  }
  ++l.gen;  // a pending event's id no longer refers to it
  l.cb = cb;
  l.ctx = ctx;
  l.arg = arg;
  tree_[leaf0_ + lane] = key(Entry{lane, seq, t});
  climb(leaf0_ + lane);
  return {EventId::kLane | lane, l.gen};
}

EventId Engine::reschedule(EventId& id, std::int64_t t, Callback cb, void* ctx, std::uint64_t arg) {
  if (id.valid() && (id.slot & EventId::kLane)) {
    const std::uint32_t lane = id.slot & ~EventId::kLane;
    id = {};
    return at_lane(lane, t, cb, ctx, arg);
  }
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
  if (was && (id.slot & EventId::kLane)) {
    const std::uint32_t lane = id.slot & ~EventId::kLane;
    Lane& l = lanes_[lane];
    l.armed = false;
    --armed_lanes_;
    ++l.gen;
    tree_[leaf0_ + lane] = kEmpty;
    climb(leaf0_ + lane);
  } else if (was) {
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
  if (fired_lane_ != kNoLane) clear_fired_lane();
  // Every pending key, the heap's (index i) and the lanes' (heap size +
  // lane), in one order.
  std::vector<std::pair<U128, std::uint32_t>> order;
  order.reserve(heap_.size() + armed_lanes_);
  for (std::uint32_t i = 0; i < heap_.size(); ++i) order.emplace_back(key(heap_[i]), i);
  for (std::uint32_t lane = 0; lane < lanes_.size(); ++lane)
    if (lanes_[lane].armed)
      order.emplace_back(tree_[leaf0_ + lane], static_cast<std::uint32_t>(heap_.size()) + lane);
  std::sort(order.begin(), order.end());
  for (std::uint32_t rank = 0; rank < order.size(); ++rank) {
    const std::uint32_t at = order[rank].second;
    if (at < heap_.size()) {
      heap_[at].set_seq(rank);
    } else {
      const std::uint32_t lane = at - static_cast<std::uint32_t>(heap_.size());
      const auto t = static_cast<std::int64_t>(static_cast<std::uint64_t>(order[rank].first >> 64));
      tree_[leaf0_ + lane] = key(Entry{lane, rank, t});
    }
  }
  if (!lanes_.empty()) rebuild_tree();
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
  if (fired_lane_ != kNoLane) clear_fired_lane();
  const U128 lane_next = tree_.empty() ? kEmpty : tree_[1];
  if (!heap_.empty() && key(heap_[0]) < lane_next) {
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
  if (lane_next == kEmpty) return false;
  const auto lane = static_cast<std::uint32_t>(lane_next);
  Lane& l = lanes_[lane];
  const auto t = static_cast<std::int64_t>(static_cast<std::uint64_t>(lane_next >> 64));
  POOLSIM_ASSERT(t >= now_, "simulated time goes back");
  POOLSIM_ASSERT(l.armed, "the tree's root is a lane with no pending event");
  now_ = t;
  l.armed = false;
  --armed_lanes_;
  ++l.gen;
  fired_lane_ = lane;  // its leaf is cleared lazily: by at_lane or the next step
  ++fired_;
  const Callback cb = l.cb;  // the handler may add lanes (lanes_ grows)
  cb(l.ctx, l.arg);
  return true;
}

void Engine::run() {
  stopped_ = false;
  while (!stopped_ && step()) {
  }
}

}  // namespace poolsim::sim
