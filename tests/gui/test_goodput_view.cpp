// The GUI's whole-run view (gui/views/goodput_view.hpp): it shows what clustersim run prints for the
// resilience and data_pipeline sections, and a hint without them.
#include <catch2/catch.hpp>

#include <QBarSet>
#include <QHorizontalStackedBarSeries>

#include <nlohmann/json.hpp>

#include "gui/views/goodput_view.hpp"
#include "sim/goodput/goodput.hpp"
#include "sim/scenario/scenario.hpp"

TEST_CASE("Whole-run view: goodput, lost time by cause and the days-to-train distribution of the CLI's model", "[gui][goodput]") {
  using namespace cs;
  nlohmann::json doc = sim::read_json_file(CLUSTERSIM_SOURCE_DIR "/scenarios/llama3-8b-h100x8.json");
  doc["training"]["tokens_to_train"] = 2e10;
  doc["resilience"] = {{"checkpoint", {{"interval_s", 3600}}}};
  const sim::Scenario s = sim::parse_scenario(doc, "s.json");
  const sim::SimulationResult result = sim::simulate(s);
  sim::goodput::RunOptions opts;
  opts.runs = gui::kGuiMonteCarloRuns;
  const sim::goodput::RunReport run = sim::goodput::analyse_run(s, result, opts);
  REQUIRE(run.resilience);

  gui::GoodputView view;
  view.show_run(std::nullopt);
  CHECK(view.summary()->text().contains("resilience"));
  CHECK_FALSE(view.lost_chart()->isVisibleTo(&view));

  view.show_run(run);
  const QString text = view.summary()->text();
  INFO(text.toStdString());
  CHECK(text.contains(QString::number(100 * run.resilience->goodput, 'f', 2) + "%"));
  CHECK(text.contains(QString::number(run.resilience->optimal_interval_s / 3600, 'f', 2) + " h"));
  CHECK(view.lost_chart()->isVisibleTo(&view));
  CHECK(view.days_chart()->isVisibleTo(&view));
  // The bars are the expected lost time by cause, in hours.
  const auto series = view.lost_chart()->chart()->series();
  REQUIRE(series.size() == 1);
  const auto sets = static_cast<QHorizontalStackedBarSeries*>(series[0])->barSets();
  REQUIRE(sets.size() == 3);
  CHECK(sets[0]->at(0) == Approx(run.resilience->expected.rework_s / 3600));
  CHECK(sets[1]->at(0) == Approx(run.resilience->expected.restart_s / 3600));
  CHECK(sets[2]->at(0) == Approx(run.resilience->expected.checkpoint_s / 3600));
}
