#include "app/common.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "models/units.hpp"
#include "real/calibrate.hpp"
#include "real/runner.hpp"
#include "sim/engine.hpp"
#include "validate/sweep_output.hpp"

namespace poolsim::app {

void add_common_flags(CLI::App* cmd, CommonFlags& f) {
  cmd->add_option("--set", f.sets,
                  "Override a scenario field before validation: key.path=value (repeatable)")
      ->type_name("KEY=VALUE");
  cmd->add_option("--seed", f.seed, "Workload seed (replaces the scenario's seed)")->check(kUint64);
  cmd->add_option("--machine", f.machine,
                  "Machine profile: default, host, a name under configs/machines/, or a YAML path")
      ->type_name("NAME|PATH")
      ->check(non_empty("a machine profile name or path"));
  cmd->add_option("--json", f.json, "Write the result as JSON to PATH ('-' for stdout)")
      ->type_name("PATH")
      ->check(non_empty("a file path, or - for stdout"));
  cmd->add_flag("--quiet,-q", f.quiet, "No progress or log lines on stderr");
}

LoadOptions load_options(const CommonFlags& f) {
  LoadOptions o;
  o.sets = f.sets;
  o.seed = f.seed;
  if (!f.machine.empty()) o.machine = f.machine;
  o.create_host_profile = [quiet = f.quiet](const std::filesystem::path& path) {
    if (!quiet)
      std::cerr
          << "poolsim: no 'host' machine profile yet; calibrating this machine (quick mode) into "
          << path.string() << "\n";
    real::CalibrateOptions co;
    co.quick = true;
    co.quiet = quiet;
    const auto report = real::calibrate(co);
    real::write_profile(report, path);
  };
  return o;
}

Scenario load_checked(const std::string& file, const CommonFlags& f) {
  return load_scenario(file, load_options(f));
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::ostringstream o;
  o << f.rdbuf();
  return o.str();
}

void log_line(const CommonFlags& f, const std::string& line) {
  if (!f.quiet) std::cerr << line << '\n';
}

std::string printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  auto hex = [&](unsigned char c) {
    static const char* kDigits = "0123456789abcdef";
    out += "\\x";
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
        hex(c);
      else
        out += static_cast<char>(c);
      ++i;
      continue;
    }
    // A UTF-8 sequence: lead byte, then 1-3 continuation bytes; overlong
    // forms, surrogates and code points above U+10FFFF are invalid.
    std::size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
    if (c >= 0xf5) n = 0;
    bool ok = n > 0 && i + n <= text.size();
    for (std::size_t k = 1; ok && k < n; ++k)
      ok = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    if (ok && n >= 3) {
      const auto c1 = static_cast<unsigned char>(text[i + 1]);
      if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0) || (c == 0xf0 && c1 < 0x90) ||
          (c == 0xf4 && c1 >= 0x90))
        ok = false;
    }
    if (!ok) {
      hex(c);
      ++i;
      continue;
    }
    out.append(text, i, n);
    i += n;
  }
  return out;
}

CLI::Validator non_empty(const std::string& what) {
  return CLI::Validator(
      [what](std::string& s) -> std::string {
        return s.empty() ? "expected " + what + ", got an empty string" : std::string();
      },
      "NONEMPTY");
}

const CLI::Validator kUint64(
    [](std::string& s) -> std::string {
      std::uint64_t x = 0;
      const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
      if (s.empty() || ptr != s.data() + s.size() || ec == std::errc::invalid_argument)
        return "expected a whole number from 0 to 18446744073709551615, got '" + printable(s) + "'";
      if (ec == std::errc::result_out_of_range)
        return "must be at most 18446744073709551615 (2^64-1), got " + s;
      return {};
    },
    "UINT64");

namespace {
// The body's result, or exit 3 when stdout could not take what was written
// to it (std::cout is synchronised with C stdio, so fflush reports it).
int flushed(int code) {
  std::cout.flush();
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    const int err = errno;
    std::cerr << "poolsim: cannot write to standard output"
              << (err ? std::string(": ") + std::strerror(err) : std::string()) << '\n';
    return kExitRefused;
  }
  return code;
}
}  // namespace

int guarded(const std::function<int()>& body) {
  try {
    return flushed(body());
  } catch (const ScenarioError& e) {
    std::cerr << "poolsim: " << printable(e.what()) << '\n';
    return kExitBadInput;
  } catch (const Usage& e) {
    std::cerr << "poolsim: " << printable(e.what()) << '\n';
    return kExitBadInput;
  } catch (const UnitError& e) {
    std::cerr << "poolsim: " << printable(e.what()) << '\n';
    return kExitBadInput;
  } catch (const std::invalid_argument& e) {
    std::cerr << "poolsim: " << printable(e.what()) << '\n';
    return kExitBadInput;
  } catch (const Refused& e) {
    std::cerr << "poolsim: " << printable(e.what()) << '\n';
    return kExitRefused;
  } catch (const sim::SimulationRefused& e) {
    std::cerr << "poolsim: " << printable(e.what()) << '\n';
    return kExitRefused;
  } catch (const real::MachineRefused& e) {
    std::cerr << "poolsim: the machine refused: " << printable(e.what()) << '\n';
    return kExitRefused;
  } catch (const std::bad_alloc&) {
    std::cerr << "poolsim: out of memory\n";
    return kExitRefused;
  } catch (const std::exception& e) {
    std::cerr << "poolsim: error: " << printable(e.what()) << '\n';
    return kExitRefused;
  }
}

void write_output(const std::string& flag, const std::string& path, const std::string& what,
                  const std::function<void(std::ostream&)>& body) {
  // A path that cannot be opened is the user's mistake (exit 2); a write
  // that fails once open (a full disk, /dev/full) is the machine refusing
  // (exit 3). The flush makes that failure show here, not in the
  // destructor, where it would be lost.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Usage(flag + " " + path + ": is a directory, expected a file path");
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Usage(flag + " " + path + ": cannot open for writing: " + std::strerror(errno));
  body(f);
  f.flush();
  if (!f)
    throw Refused(flag + " " + path + ": writing " + what + " failed: " + std::strerror(errno));
}

void write_trace(const std::filesystem::path& path, const Trace& t, const std::string& title) {
  write_output("--trace", path.string(), "the trace",
               [&](std::ostream& f) { write_chrome_trace(f, t, title); });
}

void make_output_dir(const std::string& flag, const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec || !std::filesystem::is_directory(path, ec))
    throw Usage(flag + " " + path + ": cannot create the directory: " +
                (ec ? ec.message() : std::string("a file of that name exists")));
}

void write_records(const std::string& path, const Workload& w, std::span<const RunResult> runs) {
  // Task ids index the records; the task list is in arrival, client or
  // topological order, so the class is looked up by id.
  std::vector<std::uint16_t> cls(w.tasks.size(), 0);
  for (const auto& t : w.tasks)
    if (t.id < cls.size()) cls[t.id] = t.cls;
  write_output("--records", path, "the records", [&](std::ostream& f) {
    f << "rep,task,class,outcome,worker,intended_us,submit_us,start_us,end_us,cpu_us\n";
    for (std::size_t rep = 0; rep < runs.size(); ++rep) {
      const auto& recs = runs[rep].records;
      for (std::size_t i = 0; i < recs.size(); ++i) {
        const TaskRecord& r = recs[i];
        const std::uint16_t c = i < cls.size() ? cls[i] : 0;
        const std::string name = c < w.class_names.size() ? w.class_names[c] : "";
        f << fmt::format("{},{},{},{},{},{},{},{},{},{}\n", rep + 1, i, validate::csv_cell(name),
                         to_string(r.outcome), r.worker, exact_us(r.intended), exact_us(r.submit),
                         exact_us(r.start), exact_us(r.end), exact_us(r.cpu));
      }
    }
  });
}

}  // namespace poolsim::app
