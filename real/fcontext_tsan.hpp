// fcontext_tsan.hpp: ThreadSanitizer fiber annotations for Boost.Context's
// stack switches (real/fcontext_tsan.cpp explains the mechanism). In a build
// without -fsanitize=thread it does nothing.
#pragma once

#include <cstddef>

namespace poolsim::real {

// A fiber stack [lo, lo + size) is about to be freed: the TSan fiber of the
// context that ran on it is destroyed.
void fcontext_tsan_stack_freed(void* lo, std::size_t size);

}  // namespace poolsim::real
