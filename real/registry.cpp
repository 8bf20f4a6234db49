// registry.cpp: BackendKind -> the real backend that implements it.
//
// An explicit switch rather than self-registering static objects: the real
// layer is a static library, and a linker drops an object file nobody
// references, which would silently drop a self-registering backend. Each
// factory is defined in its backend's file (real/<kind>.cpp).
#include <stdexcept>
#include <string>

#include "real/backend.hpp"

namespace poolsim::real {

std::unique_ptr<Backend> make_backend(const BackendSpec& spec) {
  switch (spec.kind) {
    case BackendKind::thread_per_task:
      return make_thread_per_task_backend(spec);
    case BackendKind::pool:
      return make_pool_backend(spec);
    case BackendKind::work_stealing:
      return make_work_stealing_backend(spec);
    case BackendKind::injecting_pool:
      return make_injecting_pool_backend(spec);
    case BackendKind::virtual_threads:
      return make_virtual_threads_backend(spec);
    case BackendKind::event_loop:
      return make_event_loop_backend(spec);
    case BackendKind::tbb:
      return make_tbb_backend(spec);
    case BackendKind::asio_pool:
      return make_asio_pool_backend(spec);
  }
  throw std::logic_error("unknown backend kind " + std::to_string(static_cast<int>(spec.kind)));
}

}  // namespace poolsim::real
