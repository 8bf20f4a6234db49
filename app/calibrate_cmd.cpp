// poolsim calibrate: measure this machine into a machine profile.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "app/common.hpp"
#include "real/calibrate.hpp"
#include "validate/output.hpp"
#include "validate/table.hpp"

namespace poolsim::app {
namespace {
struct CalibrateFlags {
  std::string out;
  bool thorough = false;
  std::string json;
  bool quiet = false;
  bool allow_busy = false;
};

int report(const CalibrateFlags& f, const real::CalibrationReport& rep,
           const std::filesystem::path& out) {
  // The profile holds the median; the mean beside it shows a long tail.
  validate::Table t({"field", "median", "mean", "p10", "p90", "samples", "method"},
                    {false, true, true, true, true, true, false});
  for (const auto& m : rep.measurements)
    t.add_row({m.field, real::format_value(m, m.median), real::format_value(m, m.mean),
               real::format_value(m, m.p10), real::format_value(m, m.p90),
               std::to_string(m.samples), m.method});
  if (f.json != "-") {
    std::cout << "machine: " << rep.cpu_model << ", kernel " << rep.kernel << "\n\n"
              << t.str() << "\nprofile written to " << out.string() << "\n";
  }
  if (!f.json.empty()) {
    nlohmann::ordered_json j;
    j["profile"] = validate::machine_json(rep.profile);
    j["path"] = out.string();
    j["kernel"] = rep.kernel;
    j["cpu_model"] = rep.cpu_model;
    for (const auto& m : rep.measurements)
      j["measurements"][m.field] = {{"median", m.median}, {"mean", m.mean},       {"p10", m.p10},
                                    {"p90", m.p90},       {"samples", m.samples}, {"unit", m.unit},
                                    {"method", m.method}};
    validate::write_json(f.json, j);
  }
  return kExitOk;
}
}  // namespace

void register_calibrate(CLI::App& app, std::function<int()>& action) {
  auto flags = std::make_shared<CalibrateFlags>();
  auto* cmd = app.add_subcommand("calibrate", "Measure this machine into a machine profile (YAML)");
  auto* out_option = cmd->add_option("--out", flags->out,
                                     "Where to write the profile (default: the 'host' profile, " +
                                         host_profile_path().string() + ")")
                         ->type_name("PATH");
  cmd->add_flag("--thorough", flags->thorough,
                "Take 5x more samples (about 100 s instead of about 35 s)");
  cmd->add_flag_callback(
      "--quick", [flags] { flags->thorough = false; }, "Fewer samples, about 35 s (the default)");
  cmd->add_option("--json", flags->json, "Write the measurements as JSON to PATH ('-' for stdout)")
      ->type_name("PATH");
  cmd->add_flag("--quiet,-q", flags->quiet, "No progress lines on stderr");
  cmd->add_flag("--allow-busy", flags->allow_busy,
                "Measure even when other work keeps the CPUs over 10% busy (by default calibrate "
                "refuses: that work would be measured as the machine's costs and noise)");
  cmd->callback([flags, out_option, &action] {
    const bool explicit_out = out_option->count() > 0;
    action = [flags, explicit_out] {
      real::CalibrateOptions o;
      o.quick = !flags->thorough;
      o.quiet = flags->quiet;
      o.allow_busy = flags->allow_busy;
      // The default host profile's directory is created; an --out path's
      // must exist. Checked before the measurements, which take seconds.
      const bool create_parent = !explicit_out;
      const std::filesystem::path out =
          explicit_out ? std::filesystem::path(flags->out) : host_profile_path();
      try {
        real::check_profile_path(out, create_parent);
        const auto rep = real::calibrate(o);
        real::write_profile(rep, out, create_parent);
        return report(*flags, rep, out);
      } catch (const real::ProfileWriteError& e) {
        throw Refused(std::string(explicit_out ? "calibrate --out: " : "calibrate: ") + e.what());
      }
    };
  });
}

}  // namespace poolsim::app
