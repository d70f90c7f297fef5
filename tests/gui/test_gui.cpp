// GUI tests (offscreen): the knobs drive the library exactly as `clustersim run --set` does, invalid
// knobs show the library's message and keep the last good result, the charts and the sweep view show
// the numbers sim/report and sim/explore computed, the UI thread keeps answering while a large scenario
// simulates (how fast it answers is a benchmark: bench/gui_bench.cpp), and --screenshot writes a real
// PNG.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include <QApplication>
#include <QBarSet>
#include <QHorizontalStackedBarSeries>
#include <QImage>
#include <QLabel>
#include <QProcess>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QScatterSeries>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>

#include <nlohmann/json.hpp>

#include "gui/app/main_window.hpp"
#include "gui/app/sweep_plan.hpp"
#include "gui/views/breakdown_chart.hpp"
#include "gui/views/format.hpp"
#include "gui/views/headline_panel.hpp"
#include "gui/views/knob_panel.hpp"
#include "gui/views/pareto_chart.hpp"
#include "gui/views/timeline_view.hpp"
#include "sim/explore/sweep.hpp"
#include "sim/scenario/params.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"

using cs::gui::MainWindow;

namespace {

QString scenario(const char* name) { return QStringLiteral(CLUSTERSIM_SOURCE_DIR "/scenarios/") + name; }

QSpinBox* spin(const MainWindow& w, const char* path) {
  auto* s = w.knobs()->findChild<QSpinBox*>(path);
  REQUIRE(s != nullptr);
  return s;
}

}  // namespace

TEST_CASE("Every knob's range and choices are the parameter table's", "[gui]") {
  namespace params = cs::sim::params;
  cs::gui::KnobPanel panel;
  int spins = 0, doubles = 0, combos = 0;
  for (auto* s : panel.findChildren<QSpinBox*>()) {
    const params::Param* p = params::find(s->objectName().toStdString());
    INFO(s->objectName().toStdString());
    REQUIRE(p != nullptr);
    CHECK(s->minimum() == p->min);
    CHECK(s->maximum() == p->max);
    ++spins;
  }
  for (auto* d : panel.findChildren<QDoubleSpinBox*>()) {
    const params::Param* p = params::find(d->objectName().toStdString());
    INFO(d->objectName().toStdString());
    REQUIRE(p != nullptr);
    const double scale = p->path == "training.tokens_to_train" ? 1e9 : 1;  // shown in billions
    CHECK(d->minimum() * scale == Approx(p->min));
    CHECK(d->maximum() * scale == Approx(p->max));
    ++doubles;
  }
  for (auto* c : panel.findChildren<QComboBox*>()) {
    const params::Param* p = params::find(c->objectName().toStdString());
    INFO(c->objectName().toStdString());
    REQUIRE(p != nullptr);
    std::vector<std::string> items, expected = p->choices;
    for (int i = 0; i < c->count(); ++i) items.push_back(c->itemText(i).toStdString());
    if (p->type == params::Type::integer)
      for (auto v = static_cast<long long>(p->min); v <= static_cast<long long>(p->max); ++v) expected.push_back(std::to_string(v));
    CHECK(items == expected);
    ++combos;
  }
  CHECK(spins == 11);
  CHECK(doubles == 3);
  CHECK(combos == 9);
}

TEST_CASE("TP knob edit shows the step time simulate gives for --set", "[gui]") {
  MainWindow w;
  w.set_headless(true);
  const QString path = scenario("llama3-70b-h100x64-ndr400.json");
  REQUIRE(w.open_file(path));
  w.show();
  REQUIRE(w.wait_until_idle(120000));
  REQUIRE(w.current_report() != nullptr);
  const double tp8_step = w.current_report()->step_time_s;
  QSpinBox* tp = spin(w, "training.tensor_model_parallel_size");
  REQUIRE(tp->value() == 8);

  tp->setValue(4);  // what a user's edit does: valueChanged -> override -> validate -> worker
  REQUIRE(w.wait_until_idle(120000));

  const auto expected =
      cs::sim::simulate(cs::sim::load_scenario(path.toStdString(), {"training.tensor_model_parallel_size=4"})).report;
  REQUIRE(w.current_report()->tp == 4);
  CHECK(w.current_report()->step_time_s == expected.step_time_s);
  CHECK(w.current_report()->step_time_s != tp8_step);
  CHECK(w.headline()->text("step_time") == cs::gui::HeadlinePanel::step_time_text(expected));
  CHECK(w.validation_message().isEmpty());
  CHECK(w.document().edits().back() == "training.tensor_model_parallel_size=4");

  // The CLI with the same --set prints the same number.
  QProcess cli;
  cli.start(CLUSTERSIM_BINARY, {"run", path, "--json", "--set", "training.tensor_model_parallel_size=4"});
  REQUIRE(cli.waitForFinished(120000));
  REQUIRE(cli.exitCode() == 0);
  const auto json = nlohmann::json::parse(cli.readAllStandardOutput().toStdString());
  CHECK(json.at("step_time_s").get<double>() == w.current_report()->step_time_s);
}

TEST_CASE("An impossible knob combination shows the library's message and keeps the last result", "[gui]") {
  MainWindow w;
  w.set_headless(true);
  REQUIRE(w.open_file(scenario("llama3-70b-h100x64-ndr400.json")));
  w.show();
  REQUIRE(w.wait_until_idle(120000));
  const QString before = w.headline()->text("step_time");
  const double step = w.current_report()->step_time_s;

  spin(w, "training.tensor_model_parallel_size")->setValue(16);  // Llama-3 70B has 8 query groups
  REQUIRE(w.wait_until_idle(120000));
  const QString message = w.validation_message();
  INFO(message.toStdString());
  CHECK(message.contains("training.tensor_model_parallel_size"));
  CHECK(message.contains("does not divide"));
  auto* label = w.findChild<QLabel*>("validation_message");
  REQUIRE(label != nullptr);
  CHECK(label->isVisible());
  CHECK(label->text().contains("does not divide"));
  CHECK(w.headline()->text("step_time") == before);
  CHECK(w.current_report()->step_time_s == step);

  // Back to a valid value: the message goes and a result comes.
  spin(w, "training.tensor_model_parallel_size")->setValue(8);
  REQUIRE(w.wait_until_idle(120000));
  CHECK(w.validation_message().isEmpty());
  CHECK_FALSE(label->isVisible());
  CHECK(w.current_report()->step_time_s == step);
}

TEST_CASE("The UI thread keeps answering while a large scenario simulates", "[gui][slow]") {
  // How long the event loop waits at worst is a figure of the machine's load: bench/gui_bench.cpp prints
  // it. What holds anywhere: timer events are delivered while the simulation is still in flight (the
  // simulator is off the UI thread), a second edit supersedes the first, and the timeline draws a
  // bounded number of rectangles however many tasks there are.
  MainWindow w;
  w.set_headless(true);
  w.show();
  REQUIRE(w.wait_until_idle(120000));

  int ticks_in_flight = 0;
  QTimer timer;
  QObject::connect(&timer, &QTimer::timeout, [&]() {
    const cs::sim::Report* r = w.current_report();
    if (r == nullptr || r->global_batch_size != 1024) ++ticks_in_flight;  // the edited result is not in yet
  });
  timer.start(10);
  REQUIRE(w.open_file(scenario("gpt3-175b-a100x1024.json")));
  // A second edit while the first runs: it supersedes it.
  spin(w, "training.global_batch_size")->setValue(1024);
  REQUIRE(w.wait_until_idle(300000));
  timer.stop();
  REQUIRE(w.current_report() != nullptr);
  CHECK(w.current_report()->global_batch_size == 1024);
  CHECK(w.current_report()->tasks > 100000);
  CHECK(ticks_in_flight > 0);

  w.grab();
  cs::gui::TimelineView* tl = w.timeline();
  tl->grab();
  CHECK(tl->last_paint_rects() > 0);
  CHECK(tl->last_paint_rects() < static_cast<long long>(w.current_report()->tasks) / 10);
}

TEST_CASE("The breakdown chart shows the report's exposed communication by kind", "[gui]") {
  MainWindow w;
  w.set_headless(true);
  REQUIRE(w.open_file(scenario("llama3-70b-h100x64-ndr400.json")));
  w.show();
  REQUIRE(w.wait_until_idle(120000));
  const cs::sim::Report* r = w.current_report();
  REQUIRE(r != nullptr);
  REQUIRE(r->breakdown.exposed_comm_s > 0);
  const auto series = w.breakdown()->chart()->series();
  REQUIRE(series.size() == 1);
  auto* bars = qobject_cast<QHorizontalStackedBarSeries*>(series.front());
  REQUIRE(bars != nullptr);
  // One bar (no baseline): each "<kind> exposed" set holds the report's number for that kind, and a
  // kind the report has none of gets no set.
  int kinds_shown = 0;
  double shown_total = 0;
  for (int k = 0; k < cs::sim::kNumCategories; ++k) {
    const auto cat = static_cast<cs::sim::Category>(k);
    if (!cs::sim::is_comm(cat)) continue;
    const QString label = cs::gui::category_label(cat).section(' ', 0, 0) + " exposed";
    const double want = r->exposed_comm_s_by_kind[static_cast<std::size_t>(k)];
    const QBarSet* set = nullptr;
    for (QBarSet* b : bars->barSets())
      if (b->label() == label) set = b;
    INFO(label.toStdString() << ": report " << want);
    if (want <= 0) {
      CHECK(set == nullptr);
      continue;
    }
    REQUIRE(set != nullptr);
    REQUIRE(set->count() == 1);
    CHECK(set->at(0) == want);
    ++kinds_shown;
    shown_total += set->at(0);
  }
  CHECK(kinds_shown >= 1);
  CHECK(shown_total == Approx(r->breakdown.exposed_comm_s).epsilon(1e-9));
}

TEST_CASE("The sweep plan varies nodes, TP and PP around the document, layout entries first", "[gui]") {
  // Llama-3 8B on 1 node of 8 GPUs at TP2 PP1: the scaling curve is 1, 2 and 4 nodes at TP2 PP1 (1/4 and
  // 1/2 of one node do not exist); the grid is nodes {1, 2} x TP {1, 2, 4, 8} x PP {1, 2, 4, 8, 16} = 40
  // layouts, of which (4 nodes, TP2, PP1) is not one: 41 points.
  const auto doc = cs::sim::read_json_file(scenario("llama3-8b-h100x8.json").toStdString());
  const cs::gui::SweepPlan plan = cs::gui::plan_sweep(doc);
  REQUIRE(plan.assignments.size() == 41);
  CHECK_FALSE(plan.per_billion_tokens);  // the scenario sets tokens_to_train
  REQUIRE(plan.scaling.size() == 3);
  const std::vector<long long> scaling_nodes{1, 2, 4};
  for (std::size_t k = 0; k < plan.scaling.size(); ++k) {
    const auto& a = plan.assignments[plan.scaling[k]];
    CHECK(a[0] == cs::sim::Assignment::value_type{"cluster.nodes", scaling_nodes[k]});
    CHECK(a[1] == cs::sim::Assignment::value_type{"training.tensor_model_parallel_size", 2});
    CHECK(a[2] == cs::sim::Assignment::value_type{"training.pipeline_model_parallel_size", 1});
  }
  REQUIRE(plan.current);
  CHECK(*plan.current == plan.scaling[0]);
  std::set<std::string> distinct;
  for (const auto& a : plan.assignments) {
    REQUIRE(a.size() == cs::gui::kLayoutEntries + 1);
    CHECK(a[3] == cs::sim::Assignment::value_type{"training.data_parallel_size", nullptr});  // DP derived
    distinct.insert(nlohmann::json(a).dump());
  }
  CHECK(distinct.size() == plan.assignments.size());

  // Without tokens_to_train the sweep prices 1e9 tokens, and the report's days are per billion tokens:
  // days = 1e9 / tokens_per_s / 86400 (steps = 1e9 / tokens_per_step, each step_time_s long).
  auto untimed = doc;
  untimed["training"].erase("tokens_to_train");
  const cs::gui::SweepPlan per_billion = cs::gui::plan_sweep(untimed);
  REQUIRE(per_billion.per_billion_tokens);
  REQUIRE(per_billion.current);
  const auto& a = per_billion.assignments[*per_billion.current];
  REQUIRE(a.size() == cs::gui::kLayoutEntries + 2);
  CHECK(a.back() == cs::sim::Assignment::value_type{"training.tokens_to_train", 1e9});
  const cs::sim::SweepPoint p = cs::sim::evaluate_point(untimed, "llama3-8b-h100x8.json", a, false);
  REQUIRE(p.simulated());
  CHECK(p.report.cost.days_to_train == Approx(1e9 / p.report.tokens_per_s / 86400).epsilon(1e-12));
  CHECK(p.report.cost.usd_to_train ==
        Approx(1e9 / p.report.tokens_per_s / 3600 * p.report.num_gpus * p.report.price_per_gpu_hour_usd).epsilon(1e-12));
  CHECK(cs::gui::point_label(p) == "1 node (8 GPUs) TP2 PP1 DP4");
}

TEST_CASE("The sweep view shows what sim/explore computed and a clicked point loads its layout", "[gui]") {
  MainWindow w;
  w.set_headless(true);
  const QString path = scenario("llama3-8b-h100x8.json");
  REQUIRE(w.open_file(path));
  REQUIRE(w.set_view("sweep"));
  w.show();
  REQUIRE(w.wait_until_idle(300000));
  const auto sweep = w.sweep_result();
  REQUIRE(sweep);
  INFO(sweep->error);
  REQUIRE(sweep->error.empty());
  const auto& points = sweep->points;
  REQUIRE(points.size() == sweep->plan.assignments.size());
  for (std::size_t i = 0; i < points.size(); ++i) CHECK(points[i].assignment == sweep->plan.assignments[i]);

  // The Pareto front is sim/explore's, and it is not empty.
  CHECK(sweep->pareto == cs::sim::pareto_front(points));
  CHECK_FALSE(sweep->pareto.empty());

  // The document's own layout is the point the main view simulated, through the same front door.
  REQUIRE(sweep->plan.current);
  const cs::sim::SweepPoint& current = points[*sweep->plan.current];
  REQUIRE(current.simulated());
  CHECK(current.report.step_time_s == w.current_report()->step_time_s);
  CHECK(current.report.cost.usd_to_train == w.current_report()->cost.usd_to_train);

  // The table: one row per simulated point, the front first, each cell the report's number.
  std::size_t simulated = 0;
  for (const auto& p : points) simulated += p.simulated();
  QTableWidget* table = w.sweep_table();
  REQUIRE(table->rowCount() == static_cast<int>(simulated));
  for (int row = 0; row < table->rowCount(); ++row) {
    const bool starred = !table->item(row, 8)->text().isEmpty();
    CHECK(starred == (row < static_cast<int>(sweep->pareto.size())));
  }
  for (std::size_t k = 0; k < sweep->pareto.size(); ++k) {
    const cs::sim::Report& r = points[sweep->pareto[k]].report;
    INFO("front point " << k);
    CHECK(table->item(static_cast<int>(k), 0)->text().startsWith(QString::fromStdString(cs::gui::point_label(points[sweep->pareto[k]]))));
    CHECK(table->item(static_cast<int>(k), 6)->text() == cs::gui::format_days(r.cost.days_to_train));
    CHECK(table->item(static_cast<int>(k), 7)->text() == cs::gui::format_usd(r.cost.usd_to_train));
  }
  // The chart: as many highlighted front points as sim::pareto_front gives.
  int front_shown = -1;
  for (QAbstractSeries* s : w.pareto()->chart()->series())
    if (s->name() == "Pareto front") front_shown = static_cast<int>(qobject_cast<QScatterSeries*>(s)->count());
  CHECK(front_shown == static_cast<int>(sweep->pareto.size()));

  // This scenario's cluster has no inter-node network: the library rejects every multi-node point, and
  // the view keeps them out with its message.
  for (const auto& p : points)
    if (p.report.nodes > 1 || p.assignment[0].second != 1) {
      CHECK(p.status == cs::sim::PointStatus::invalid);
      CHECK_THAT(p.error, Catch::Contains("cluster.inter_node"));
    }
  const auto it = std::find_if(points.begin(), points.end(), [&](const auto& p) {
    return p.simulated() && &p != &current && p.report.tp != current.report.tp && p.report.pp != current.report.pp;
  });
  REQUIRE(it != points.end());
  w.load_sweep_point(*it);
  REQUIRE(w.wait_until_idle(300000));
  CHECK(w.current_report()->tp == it->report.tp);
  CHECK(w.current_report()->pp == it->report.pp);
  CHECK(w.current_report()->num_gpus == it->report.num_gpus);
  CHECK(w.current_report()->step_time_s == it->report.step_time_s);
  CHECK(spin(w, "training.tensor_model_parallel_size")->value() == it->report.tp);
  CHECK_FALSE(cs::gui::find_path(w.document().content(), "training.data_parallel_size"));  // still derived
}

TEST_CASE("The screenshot option writes a PNG with real content and bad input exits 2", "[gui]") {
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  const QString out = dir.filePath("shot.png");
  QProcess gui;
  gui.start(CLUSTERSIM_GUI_BINARY, {scenario("llama3-70b-h100x64-ndr400.json"), "--screenshot", out, "--set",
                                    "training.pipeline_model_parallel_size=8"});
  REQUIRE(gui.waitForFinished(180000));
  INFO(gui.readAllStandardError().toStdString());
  REQUIRE(gui.exitCode() == 0);
  QImage img(out);
  REQUIRE(!img.isNull());
  CHECK(img.width() == 1600);
  CHECK(img.height() == 1000);
  // Real content: many pixels are neither the window background nor white.
  const QRgb bg = img.pixel(img.width() - 2, img.height() / 2);
  long long different = 0;
  for (int y = 0; y < img.height(); y += 4)
    for (int x = 0; x < img.width(); x += 4)
      if (img.pixel(x, y) != bg && img.pixel(x, y) != qRgb(255, 255, 255)) ++different;
  CHECK(different > (img.width() / 4) * (img.height() / 4) / 20);

  QProcess bad;
  bad.start(CLUSTERSIM_GUI_BINARY, {scenario("llama3-70b-h100x64-ndr400.json"), "--screenshot", dir.filePath("bad.png"),
                                    "--set", "training.tensor_model_parallel_size=16"});
  REQUIRE(bad.waitForFinished(180000));
  CHECK(bad.exitCode() == 2);
  CHECK(QString(bad.readAllStandardError()).contains("training.tensor_model_parallel_size"));
  CHECK_FALSE(QFile::exists(dir.filePath("bad.png")));
}

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QStandardPaths::setTestModeEnabled(true);  // never touch the user's recovery file
  int qt_argc = 1;
  char name[] = "test_gui";
  char* qt_argv[] = {name, nullptr};
  QApplication app(qt_argc, qt_argv);
  return Catch::Session().run(argc, argv);
}
