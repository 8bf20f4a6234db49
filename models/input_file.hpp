// input_file.hpp: reading one input file (scenario, machine profile, samples)
// safely.
//
// Hostile input (docs/scenarios.md, "Limits"): input files are opened
// non-blocking and must be regular files under a size cap; FIFOs, devices,
// directories and symbolic-link loops are refused by name, so nothing the
// loader is pointed at can hang it or make it allocate without bound.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace poolsim::loader {

// Reads an input file (scenario, machine profile, samples) of at most
// `max_bytes`. Refuses, with a message naming the file, what is not a regular
// file: a FIFO or a device would block or never end, a directory has no text.
// The file is opened non-blocking (so a FIFO without a writer cannot hang the
// open) and checked with fstat on the open descriptor, so what is read is what
// was checked. Returns nullopt and sets `error` on failure.
std::optional<std::string> read_input(const std::filesystem::path& p, std::int64_t max_bytes,
                                      std::string& error);

}  // namespace poolsim::loader
