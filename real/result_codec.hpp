// result_codec.hpp: the child -> parent transfer of one repetition.
//
// A frame is [status u8][length u64][payload]. Status ok carries a RunResult
// in a flat binary form (records and spans are trivially copyable and are
// written as raw arrays: 100k records are one 4.8 MB memcpy, not 100k JSON
// objects); refused and failed carry a message. Parent and child are the same
// binary on the same machine, so the byte order and struct layouts agree.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "models/result.hpp"

namespace poolsim::real {

enum class ChildStatus : std::uint8_t { ok = 0, refused = 1, failed = 2 };

std::string encode_result(const RunResult& r);
// Throws std::runtime_error on a truncated or malformed payload.
RunResult decode_result(std::string_view bytes);

// Writes the whole frame with write(2) (loops on short writes and EINTR).
// Returns false if the pipe is gone.
bool write_frame(int fd, ChildStatus status, std::string_view payload);

struct Frame {
  ChildStatus status = ChildStatus::failed;
  std::string payload;
};
// Parses a complete frame from `bytes`; false if incomplete.
bool parse_frame(std::string_view bytes, Frame& out);

}  // namespace poolsim::real
