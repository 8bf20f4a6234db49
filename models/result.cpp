// result.cpp: Chrome trace-event JSON for simulated and measured schedules.
//
// Written by hand rather than through a JSON DOM: a trace of a 100k-task run
// has millions of events, and streaming them keeps memory flat. Timestamps are
// printed from integer nanoseconds ("12.345" microseconds), never through
// floating point, so the same schedule gives the same bytes (the simulator's
// determinism tests compare trace files). Format: the Trace Event Format's
// "X" (complete) events plus "M" metadata naming processes and threads;
// Perfetto and chrome://tracing open it.
#include "models/result.hpp"

#include <fmt/format.h>

#include <ostream>

namespace poolsim {

std::string_view to_string(SpanKind k) {
  switch (k) {
    case SpanKind::running:
      return "running";
    case SpanKind::runnable:
      return "runnable";
    case SpanKind::blocked:
      return "blocked";
    case SpanKind::throttled:
      return "throttled";
    case SpanKind::task:
      return "task";
  }
  return "?";
}

std::string_view to_string(TaskOutcome o) {
  switch (o) {
    case TaskOutcome::not_run:
      return "not_run";
    case TaskOutcome::completed:
      return "completed";
    case TaskOutcome::rejected:
      return "rejected";
  }
  return "?";
}

std::string exact_us(Duration d) {
  const auto ns = d.count();
  const auto sign = ns < 0 ? "-" : "";
  const auto a = ns < 0 ? -ns : ns;
  return fmt::format("{}{}.{:03}", sign, a / 1000, a % 1000);
}

namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20)
      out += fmt::format("\\u{:04x}", c);
    else
      out += c;
  }
  return out;
}

}  // namespace

void write_chrome_trace(std::ostream& out, const Trace& trace, const std::string& title) {
  // pid 1: CPUs, pid 2: OS threads.
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"title\":\"" << escape(title)
      << "\"},\"traceEvents\":[\n";
  out << "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"CPUs\"}},\n";
  out << "{\"ph\":\"M\",\"pid\":2,\"name\":\"process_name\",\"args\":{\"name\":\"threads\"}}";
  for (std::size_t i = 0; i < trace.tracks.size(); ++i) {
    const auto& t = trace.tracks[i];
    out << fmt::format(
        ",\n{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":\"{}"
        "\"}}}}",
        t.is_cpu ? 1 : 2, i, escape(t.name));
    out << fmt::format(
        ",\n{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_sort_index\",\"args\":{{\"sort_"
        "index\":{}}}}}",
        t.is_cpu ? 1 : 2, i, i);
  }
  for (const auto& s : trace.spans) {
    const bool cpu = s.track < trace.tracks.size() && trace.tracks[s.track].is_cpu;
    std::string name;
    if (s.task != TraceSpan::kNoTask && (s.kind == SpanKind::running || s.kind == SpanKind::task))
      name = fmt::format("task {}", s.task);
    else
      name = std::string(to_string(s.kind));
    out << fmt::format(
        ",\n{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"name\":\"{}\",\"cat\":\"{}"
        "\"",
        cpu ? 1 : 2, s.track, exact_us(s.begin), exact_us(s.end - s.begin), name,
        to_string(s.kind));
    if (s.task != TraceSpan::kNoTask || s.thread != TraceSpan::kNoTask) {
      out << ",\"args\":{";
      bool comma = false;
      if (s.task != TraceSpan::kNoTask) {
        out << "\"task\":" << s.task;
        comma = true;
      }
      if (s.thread != TraceSpan::kNoTask) {
        if (comma) out << ",";
        out << "\"thread\":" << s.thread;
      }
      out << "}";
    }
    out << "}";
  }
  out << "\n]}\n";
}

}  // namespace poolsim
