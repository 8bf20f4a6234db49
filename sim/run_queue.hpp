// run_queue.hpp: one CPU's queue of runnable threads as EEVDF picks from it
// (kernel/sched/fair.c, 6.18: __pick_eevdf over the rb-tree ordered by
// deadline and augmented with each subtree's minimum vruntime).
//
// An entry is a thread's virtual deadline d, vruntime v and enqueue number
// seq. The pick is the entry with the earliest (d, seq) among the eligible
// ones, those with v <= V (the caller's predicate, which must be monotone:
// true up to some v, false beyond); equal deadlines go first in, first out,
// as the kernel's tree puts an equal key to the right. Deadlines are not
// vruntime plus one slice for every entry: a thread preempted in the middle
// of its slice keeps its deadline (put_prev_entity does not touch it), a
// new one has half a slice, a migrated one keeps its relative deadline. So
// no heap on one key can answer the pick; this is a treap keyed by (v, seq)
// whose nodes keep their subtree's earliest (d, seq) and its lowest seq,
// the dual of the kernel's tree (the same answer, O(log n) expected per
// operation). Node priorities are a hash of seq, so every run is the same.
//
// Invariants (asserted in debug builds by check()): the key order, the heap
// order of priorities, and each node's two subtree summaries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/assert.hpp"
#include "models/units.hpp"

namespace poolsim::sim {

struct RqEntry {
  Duration d;  // virtual deadline
  Duration v;  // vruntime
  std::uint64_t seq;
  std::uint32_t t;  // the thread
};

class RunQueue {
 public:
  [[nodiscard]] bool empty() const { return root_ < 0; }
  [[nodiscard]] std::size_t size() const { return size_; }

  void push(const RqEntry& e) {
    const int n = alloc(e);
    root_ = insert(root_, n);
    ++size_;
  }

  // The lowest vruntime queued (the tree's leftmost entry).
  [[nodiscard]] const RqEntry& leftmost() const {
    POOLSIM_ASSERT(!empty(), "leftmost of an empty run queue");
    int n = root_;
    while (nodes_[n].l >= 0) n = nodes_[n].l;
    return nodes_[n].e;
  }

  // The entry enqueued longest ago (lowest seq): the tail of the kernel's
  // most-recently-used cfs_tasks list, where detach_tasks takes from.
  [[nodiscard]] const RqEntry& oldest() const {
    POOLSIM_ASSERT(!empty(), "oldest of an empty run queue");
    return nodes_[nodes_[root_].oldest].e;
  }

  // pick_eevdf: the earliest (d, seq) among the entries whose vruntime
  // `eligible` accepts; if none is, the earliest deadline of all.
  template <class Eligible>
  [[nodiscard]] const RqEntry& best(Eligible eligible) const {
    POOLSIM_ASSERT(!empty(), "pick from an empty run queue");
    int cand = -1;
    for (int n = root_; n >= 0;) {
      const Node& x = nodes_[n];
      if (eligible(x.e.v)) {  // x and its whole left subtree are eligible
        cand = earlier(cand, n);
        if (x.l >= 0) cand = earlier(cand, nodes_[x.l].best);
        n = x.r;
      } else {
        n = x.l;
      }
    }
    return nodes_[cand >= 0 ? cand : nodes_[root_].best].e;
  }

  // Removes the entry with this (v, seq); returns it.
  RqEntry erase(const RqEntry& key) {
    int removed = -1;
    root_ = erase(root_, key, removed);
    POOLSIM_ASSERT(removed >= 0, "erase of an entry not in the run queue");
    const RqEntry e = nodes_[removed].e;
    nodes_[removed].l = free_;
    free_ = removed;
    --size_;
    return e;
  }

  // Every entry, in vruntime order.
  template <class F>
  void for_each(F f) const {
    visit(root_, f);
  }

  // Checks every invariant (debug builds; O(n)).
  void check() const {
    std::size_t count = 0;
    check(root_, count);
    POOLSIM_ASSERT(count == size_, "the run queue's size counts its nodes");
    const RqEntry* prev = nullptr;
    for_each([&](const RqEntry& e) {
      POOLSIM_ASSERT(prev == nullptr || key_less(*prev, e), "run queue out of (v, seq) order");
      prev = &e;
    });
  }

 private:
  struct Node {
    RqEntry e;
    std::uint64_t prio;
    int l = -1, r = -1;
    int best = -1;    // subtree's earliest (d, seq)
    int oldest = -1;  // subtree's lowest seq
  };

  static bool key_less(const RqEntry& a, const RqEntry& b) {
    return a.v < b.v || (a.v == b.v && a.seq < b.seq);
  }
  [[nodiscard]] int earlier(int a, int b) const {
    if (a < 0) return b;
    const RqEntry &x = nodes_[a].e, &y = nodes_[b].e;
    return (y.d < x.d || (y.d == x.d && y.seq < x.seq)) ? b : a;
  }
  [[nodiscard]] int older(int a, int b) const { return nodes_[b].e.seq < nodes_[a].e.seq ? b : a; }
  // splitmix64 of seq: a priority every run agrees on.
  static std::uint64_t hash(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }

  int alloc(const RqEntry& e) {
    int n = free_;
    if (n >= 0) {
      free_ = nodes_[n].l;
    } else {
      n = static_cast<int>(nodes_.size());
      nodes_.emplace_back();
    }
    nodes_[n] = Node{e, hash(e.seq), -1, -1, n, n};
    return n;
  }

  void pull_up(int n) {
    Node& x = nodes_[n];
    x.best = n;
    x.oldest = n;
    for (const int c : {x.l, x.r}) {
      if (c < 0) continue;
      x.best = earlier(x.best, nodes_[c].best);
      x.oldest = older(x.oldest, nodes_[c].oldest);
    }
  }

  int rotate_right(int n) {
    const int l = nodes_[n].l;
    nodes_[n].l = nodes_[l].r;
    nodes_[l].r = n;
    pull_up(n);
    pull_up(l);
    return l;
  }
  int rotate_left(int n) {
    const int r = nodes_[n].r;
    nodes_[n].r = nodes_[r].l;
    nodes_[r].l = n;
    pull_up(n);
    pull_up(r);
    return r;
  }

  int insert(int at, int n) {
    if (at < 0) return n;
    if (key_less(nodes_[n].e, nodes_[at].e)) {
      nodes_[at].l = insert(nodes_[at].l, n);
      if (nodes_[nodes_[at].l].prio > nodes_[at].prio) return rotate_right(at);
    } else {
      nodes_[at].r = insert(nodes_[at].r, n);
      if (nodes_[nodes_[at].r].prio > nodes_[at].prio) return rotate_left(at);
    }
    pull_up(at);
    return at;
  }

  // Joins two treaps whose keys are all ordered a < b.
  int merge(int a, int b) {
    if (a < 0) return b;
    if (b < 0) return a;
    if (nodes_[a].prio > nodes_[b].prio) {
      nodes_[a].r = merge(nodes_[a].r, b);
      pull_up(a);
      return a;
    }
    nodes_[b].l = merge(a, nodes_[b].l);
    pull_up(b);
    return b;
  }

  int erase(int at, const RqEntry& key, int& removed) {
    if (at < 0) return at;
    Node& x = nodes_[at];
    if (x.e.seq == key.seq && x.e.v == key.v) {
      removed = at;
      return merge(x.l, x.r);
    }
    if (key_less(key, x.e))
      x.l = erase(x.l, key, removed);
    else
      nodes_[at].r = erase(x.r, key, removed);
    pull_up(at);
    return at;
  }

  template <class F>
  void visit(int n, F& f) const {
    if (n < 0) return;
    visit(nodes_[n].l, f);
    f(nodes_[n].e);
    visit(nodes_[n].r, f);
  }

  void check(int n, std::size_t& count) const {
    if (n < 0) return;
    ++count;
    const Node& x = nodes_[n];
    int best = n, old = n;
    for (const int c : {x.l, x.r}) {
      if (c < 0) continue;
      POOLSIM_ASSERT(nodes_[c].prio <= x.prio, "a treap node outranks its parent");
      check(c, count);
      best = earlier(best, nodes_[c].best);
      old = older(old, nodes_[c].oldest);
    }
    POOLSIM_ASSERT(best == x.best && old == x.oldest, "a stale subtree summary");
  }

  std::vector<Node> nodes_;
  int root_ = -1;
  int free_ = -1;
  std::size_t size_ = 0;
};

}  // namespace poolsim::sim
