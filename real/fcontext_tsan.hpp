// fcontext_tsan.hpp: ThreadSanitizer fiber annotations for Boost.Context's
// stack switches (real/fcontext_tsan.cpp explains the mechanism). In a build
// without -fsanitize=thread both functions do nothing.
#pragma once

#include <cstddef>

namespace poolsim::real {

// True in a ThreadSanitizer build, where this library interposes
// jump_fcontext / ontop_fcontext / make_fcontext.
bool fcontext_tsan_active();

// A fiber stack [lo, lo + size) is about to be freed: the TSan fiber of the
// context that ran on it is destroyed.
void fcontext_tsan_stack_freed(void* lo, std::size_t size);

}  // namespace poolsim::real
