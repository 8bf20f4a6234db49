// registry.cpp: BackendKind -> the real backend that implements it.
//
// A table with one factory per kind of the backend registry
// (models/backend_registry.hpp), in its order, checked at compile time;
// rather than self-registering static objects: the real layer is a static
// library, and a linker drops an object file nobody references, which would
// silently drop a self-registering backend. Each factory is defined in its
// backend's file (real/<kind>.cpp).
#include "models/backend_registry.hpp"
#include "real/backend.hpp"

namespace poolsim::real {

namespace {

struct BackendFactory {
  BackendKind kind;
  std::unique_ptr<Backend> (*make)(const BackendSpec&);
};
constexpr BackendFactory kFactories[] = {
    {BackendKind::thread_per_task, make_thread_per_task_backend},
    {BackendKind::pool, make_pool_backend},
    {BackendKind::work_stealing, make_work_stealing_backend},
    {BackendKind::injecting_pool, make_injecting_pool_backend},
    {BackendKind::virtual_threads, make_virtual_threads_backend},
    {BackendKind::event_loop, make_event_loop_backend},
    {BackendKind::tbb, make_tbb_backend},
    {BackendKind::asio_pool, make_asio_pool_backend},
};
static_assert(in_registry_order(kFactories), "one real backend per backend kind");

}  // namespace

std::unique_ptr<Backend> make_backend(const BackendSpec& spec) {
  return kFactories[backend_index(spec.kind)].make(spec);
}

}  // namespace poolsim::real
