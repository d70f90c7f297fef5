#include "calibrate/profile_fit.hpp"

#include "calibrate/fit/comm_fit.hpp"
#include "calibrate/fit/compute_fit.hpp"
#include "calibrate/check/validate.hpp"

namespace cs::calibrate {

ProfileFit fit_profile(const MeasurementSet& set, const models::GpuSpec* gpu) {
  ProfileFit out;
  out.notes = set.notes;
  std::string sources;
  for (const auto& s : set.sources) sources += (sources.empty() ? "" : ", ") + s;

  if (!set.compute.empty()) {
    const models::GpuSpec* g = gpu ? gpu : guess_gpu(set.gpu);
    if (!g)
      throw InputError((set.sources.empty() ? std::string("measurements") : set.sources.front()) +
                             ": device \"" + set.gpu + "\" is not in the GPU catalog; name it with --gpu");
    out.profile.gpu = g->name;
    out.profile.compute = fit_compute_profile(set.compute, *g, set.sm_count, "fitted from " + sources, out.notes);
    if (out.profile.compute) {
      const auto loo = validate_compute_leave_one_out(set.compute, *g, set.sm_count);
      const auto summary = summarize(loo);
      for (const auto& gs : summary.groups) {
        models::FitQuality q;
        q.group = gs.group + " (leave-one-out)";
        q.points = static_cast<int>(gs.points);
        q.mape = gs.mape;
        q.worst = loo[gs.worst].label + " (" + loo[gs.worst].where + ")";
        q.worst_error = loo[gs.worst].error();
        out.profile.fit_quality.push_back(q);
      }
    }
  }
  if (!set.comm.empty()) {
    out.profile.comm.source = "fitted from " + sources;
    for (auto& g : fit_comm(set, out.notes)) {
      out.profile.comm.fits.push_back(g.fit);
      out.profile.fit_quality.push_back(g.quality);
      out.comm_groups.push_back(std::move(g));
    }
    if (out.profile.gpu.empty()) {
      const models::GpuSpec* g = gpu ? gpu : guess_gpu(set.comm.front().gpu);
      out.profile.gpu = g ? g->name : set.comm.front().gpu;
    }
  }
  if (!out.profile.compute && out.profile.comm.fits.empty()) {
    auto lines = out.notes;
    lines.push_back("nothing to fit: no usable compute or collective measurement");
    throw InputError(std::move(lines));
  }
  return out;
}

}  // namespace cs::calibrate
