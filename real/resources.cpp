// resources.cpp: the real resource table (design in resources.hpp).
#include "real/resources.hpp"

#include <utility>

namespace poolsim::real {

ResourceTable::ResourceTable(const std::vector<ResourceSpec>& specs) {
  res_.reserve(specs.size());
  for (const ResourceSpec& s : specs) res_.push_back(std::make_unique<Resource>(s.permits));
}

bool ResourceTable::try_acquire(std::uint16_t r) {
  Resource& res = *res_[r];
  std::lock_guard lk(res.mu);
  if (res.permits.free() == 0) return false;
  const bool got = res.permits.acquire(nullptr);
  POOLSIM_ASSERT(got, "a free permit was not granted");
  return got;
}

bool ResourceTable::acquire(std::uint16_t r, std::shared_ptr<Waiter> w) {
  Resource& res = *res_[r];
  std::lock_guard lk(res.mu);
  return res.permits.acquire(std::move(w));
}

void ResourceTable::granted(std::uint16_t r, Duration waited) {
  Resource& res = *res_[r];
  std::lock_guard lk(res.mu);
  res.use.granted(waited, res.permits.in_use());
}

void ResourceTable::release(std::uint16_t r) {
  Resource& res = *res_[r];
  std::optional<std::shared_ptr<Waiter>> next;
  {
    std::lock_guard lk(res.mu);
    next = res.permits.release();
  }
  if (next) (*next)->grant();
}

bool ResourceTable::idle() const {
  for (const auto& res : res_) {
    std::lock_guard lk(res->mu);
    if (res->permits.in_use() != 0 || res->permits.waiting() != 0) return false;
  }
  return true;
}

void ResourceTable::report(const std::vector<ResourceSpec>& specs,
                           std::map<std::string, double>& extra) const {
  std::vector<ResourceUse> use;
  for (const auto& res : res_) {
    std::lock_guard lk(res->mu);
    use.push_back(res->use);
  }
  report_resources(specs, use, extra);
}

}  // namespace poolsim::real
