// fcontext_tsan.cpp: ThreadSanitizer's fiber annotations for Boost.Context,
// so that the virtual-threads backend (Boost.Fiber 1.74) can run in a
// -fsanitize=thread build. Compiled to nothing in every other build.
//
// The problem. Boost.Fiber switches between fibers with Boost.Context's
// assembly routines jump_fcontext and ontop_fcontext (fcontext, not
// ucontext), which move the stack pointer to another stack without telling
// TSan. TSan keeps a shadow call stack and a vector clock per thread; after
// such a switch the shadow stack no longer matches the real one and TSan
// crashes (a SIGSEGV inside the runtime), or attributes one fiber's accesses
// to another. Debian's Boost 1.74 is built without BOOST_USE_TSAN (its
// fiber_ucontext implementation has annotations; fcontext has none in 1.74).
//
// The fix. TSan's fiber API (sanitizer/tsan_interface.h) wants a TSan fiber
// per stack and __tsan_switch_to_fiber(target) "immediately before switch to
// fiber". The only places that know the target are the switch routines
// themselves, so this file interposes them: the executable defines
// jump_fcontext, ontop_fcontext and make_fcontext (extern "C", the same
// signatures as boost/context/detail/fcontext.hpp), which wins over
// libboost_context.so in the dynamic linker's lookup for every caller,
// including libboost_fiber.so (it imports them: `nm -D` shows them as U), and
// calls the real routine found with dlsym(RTLD_NEXT, ...).
//   - make_fcontext(sp, size, fn) creates a context on the stack [sp - size,
//     sp]: it creates a TSan fiber for it and records the range.
//   - jump_fcontext(to, ...) / ontop_fcontext(to, ...) resume the context
//     whose saved stack pointer is `to`, an address inside its stack: the
//     range that contains it names the target's TSan fiber. An address in no
//     recorded range belongs to a stack that make_fcontext did not create,
//     i.e. a thread's own stack (Boost.Fiber's main context), which never
//     leaves its thread: the target is that thread's own TSan state, taken
//     at the thread's first switch, which is necessarily made from its main
//     context (every other context on a thread is entered from it).
//   - The switch synchronises (flags 0): contexts on one thread run one after
//     another, so what one did happens before what the next does.
//   - A context's TSan fiber is destroyed when its stack is freed: the worker
//     fibers' stack allocator (real/virtual_threads.cpp) calls
//     fcontext_tsan_stack_freed; a stack freed elsewhere (a scheduler's
//     dispatcher) is found when make_fcontext records a new range over the
//     same memory (the old context must be dead: its stack was freed).
// The registry of ranges is shared by all threads (a fiber may resume on
// another carrier) and is internal bookkeeping, not the program's: its lock
// and accesses are hidden from TSan (no_sanitize_thread + ignore), so it adds
// no happens-before edge between carriers that would hide a real race.
//
// Checked by tests/real/test_fiber_loop_backends.cpp, which runs the
// virtual-threads backend in the TSan build like every other backend.
#include "real/fcontext_tsan.hpp"

#if defined(__SANITIZE_THREAD__)

#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <boost/context/detail/fcontext.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>

extern "C" {
// Exported by libtsan; not declared in GCC 12's public header.
void __tsan_ignore_thread_begin();
void __tsan_ignore_thread_end();
}

namespace {

using boost::context::detail::fcontext_t;
using boost::context::detail::transfer_t;
using JumpFn = transfer_t (*)(fcontext_t, void*);
using OntopFn = transfer_t (*)(fcontext_t, void*, transfer_t (*)(transfer_t));
using MakeFn = fcontext_t (*)(void*, std::size_t, void (*)(transfer_t));

struct Range {
  std::uintptr_t hi;  // inclusive
  void* fiber;
};

// Registry of stacks created by make_fcontext: low end -> range. Guarded by
// g_lock, a spinlock TSan does not see (see the top of this file).
std::map<std::uintptr_t, Range>* g_ranges = nullptr;
int g_lock = 0;

thread_local void* t_thread_fiber = nullptr;  // this OS thread's own TSan state

__attribute__((no_sanitize_thread)) void* real_symbol(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (p == nullptr) {
    std::fprintf(stderr, "poolsim: ThreadSanitizer build: %s not found after the executable\n",
                 name);
    std::abort();
  }
  return p;
}

// The real routine `name`, looked up once (a benign idempotent race: every
// thread stores the same pointer).
template <class Fn>
__attribute__((no_sanitize_thread)) Fn resolved(Fn* cache, const char* name) {
  Fn f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
  if (f == nullptr) {
    f = reinterpret_cast<Fn>(real_symbol(name));
    __atomic_store_n(cache, f, __ATOMIC_RELEASE);
  }
  return f;
}

JumpFn g_jump = nullptr;
OntopFn g_ontop = nullptr;
MakeFn g_make = nullptr;

__attribute__((no_sanitize_thread)) void lock_registry() {
  while (__atomic_exchange_n(&g_lock, 1, __ATOMIC_ACQUIRE) != 0) {
    while (__atomic_load_n(&g_lock, __ATOMIC_RELAXED) != 0) __builtin_ia32_pause();
  }
  __tsan_ignore_thread_begin();  // the map's code is instrumented
}

__attribute__((no_sanitize_thread)) void unlock_registry() {
  __tsan_ignore_thread_end();
  __atomic_store_n(&g_lock, 0, __ATOMIC_RELEASE);
}

__attribute__((no_sanitize_thread)) void note_thread() {
  if (t_thread_fiber == nullptr) t_thread_fiber = __tsan_get_current_fiber();
}

// Under the lock: forget every range overlapping [lo, hi], destroying its
// fiber (its stack was freed, so its context is dead and not current).
void forget_overlapping(std::uintptr_t lo, std::uintptr_t hi) {
  auto it = g_ranges->upper_bound(hi);
  while (it != g_ranges->begin()) {
    --it;
    if (it->second.hi < lo) break;
    __tsan_destroy_fiber(it->second.fiber);
    it = g_ranges->erase(it);
  }
}

__attribute__((no_sanitize_thread)) void* fiber_of(fcontext_t to) {
  const auto a = reinterpret_cast<std::uintptr_t>(to);
  void* fiber = nullptr;
  lock_registry();
  if (g_ranges != nullptr) {
    auto it = g_ranges->upper_bound(a);
    if (it != g_ranges->begin()) {
      --it;
      if (a <= it->second.hi) fiber = it->second.fiber;
    }
  }
  unlock_registry();
  return fiber != nullptr ? fiber : t_thread_fiber;
}

}  // namespace

extern "C" {

__attribute__((no_sanitize_thread)) fcontext_t make_fcontext(void* sp, std::size_t size,
                                                             void (*fn)(transfer_t)) {
  note_thread();
  const fcontext_t ctx = resolved(&g_make, "make_fcontext")(sp, size, fn);
  const auto hi = reinterpret_cast<std::uintptr_t>(sp);
  const std::uintptr_t lo = hi - size;
  void* fiber = __tsan_create_fiber(0);
  lock_registry();
  if (g_ranges == nullptr) g_ranges = new std::map<std::uintptr_t, Range>();
  forget_overlapping(lo, hi);
  g_ranges->emplace(lo, Range{hi, fiber});
  unlock_registry();
  return ctx;
}

__attribute__((no_sanitize_thread)) transfer_t jump_fcontext(fcontext_t const to, void* vp) {
  note_thread();
  const JumpFn jump = resolved(&g_jump, "jump_fcontext");
  __tsan_switch_to_fiber(fiber_of(to), 0);
  return jump(to, vp);
}

__attribute__((no_sanitize_thread)) transfer_t ontop_fcontext(fcontext_t const to, void* vp,
                                                              transfer_t (*fn)(transfer_t)) {
  note_thread();
  const OntopFn ontop = resolved(&g_ontop, "ontop_fcontext");
  __tsan_switch_to_fiber(fiber_of(to), 0);
  return ontop(to, vp, fn);
}

}  // extern "C"

namespace poolsim::real {

__attribute__((no_sanitize_thread)) void fcontext_tsan_stack_freed(void* lo, std::size_t size) {
  const auto l = reinterpret_cast<std::uintptr_t>(lo);
  lock_registry();
  if (g_ranges != nullptr) forget_overlapping(l, l + size);
  unlock_registry();
}

}  // namespace poolsim::real

#else

namespace poolsim::real {

void fcontext_tsan_stack_freed(void*, std::size_t) {}

}  // namespace poolsim::real

#endif
