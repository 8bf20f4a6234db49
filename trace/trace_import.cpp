// trace_import.cpp: see trace_import.hpp.
#include "trace/trace_import.hpp"

#include <filesystem>

#include "trace/perf_tool.hpp"

namespace poolsim::trace {

ProgramModel import_trace(const std::string& path, const ProgramSelector& sel,
                          const std::string& scratch) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw TraceError(path + ": no such trace file");
  ProgramImporter importer(sel);
  TraceReader reader(path, [&](const Transition& t) { importer.on(t); });
  if (is_perf_data(path))
    read_perf_data(path, reader, (std::filesystem::path(scratch) / "perf-script.stderr").string());
  else
    read_trace_text(path, reader);
  const auto& st = reader.stats();
  if (st.inconsistent > st.max_cpu + 1 &&
      static_cast<double>(st.inconsistent) >
          kMaxInconsistentShare * static_cast<double>(st.switches))
    throw TraceError(path + ": the trace lost events: " + std::to_string(st.inconsistent) + " of " +
                     std::to_string(st.switches) +
                     " switches are missing (a thread whose events are recorded left a CPU without "
                     "a recorded switch); "
                     "record again with a larger buffer (perf sched record -m) or a shorter run");
  return importer.finish(st, path);
}

}  // namespace poolsim::trace
