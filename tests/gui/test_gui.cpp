// GUI tests (offscreen): the knobs drive the library exactly as `clustersim run --set` does, invalid
// knobs show the library's message and keep the last good result, the UI thread keeps answering while
// a large scenario simulates, and --screenshot writes a real PNG.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <algorithm>

#include <QApplication>
#include <QElapsedTimer>
#include <QImage>
#include <QLabel>
#include <QProcess>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>

#include <nlohmann/json.hpp>

#include "gui/views/headline_panel.hpp"
#include "gui/views/knob_panel.hpp"
#include "gui/app/main_window.hpp"
#include "gui/views/pareto_chart.hpp"
#include "gui/app/sweep.hpp"
#include "gui/views/timeline_view.hpp"
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
  MainWindow w;
  w.set_headless(true);
  w.show();
  REQUIRE(w.wait_until_idle(120000));

  QElapsedTimer clock;
  qint64 last = 0, max_gap = 0;
  int ticks = 0;
  QTimer timer;
  QObject::connect(&timer, &QTimer::timeout, [&]() {
    const qint64 now = clock.elapsed();
    max_gap = std::max(max_gap, now - last);
    last = now;
    ++ticks;
  });
  clock.start();
  timer.start(10);
  REQUIRE(w.open_file(scenario("gpt3-175b-a100x1024.json")));
  // A second edit while the first runs: it supersedes it.
  spin(w, "training.global_batch_size")->setValue(1024);
  REQUIRE(w.wait_until_idle(300000));
  timer.stop();
  const qint64 total = clock.elapsed();
  INFO("max gap " << max_gap << " ms over " << total << " ms, " << ticks << " ticks");
  REQUIRE(w.current_report() != nullptr);
  CHECK(w.current_report()->global_batch_size == 1024);
  CHECK(w.current_report()->tasks > 100000);
  CHECK(max_gap <= 100);

  // The timeline draws a bounded number of rectangles however many tasks there are.
  w.grab();
  cs::gui::TimelineView* tl = w.timeline();
  tl->grab();
  CHECK(tl->last_paint_rects() > 0);
  CHECK(tl->last_paint_rects() < static_cast<long long>(w.current_report()->tasks) / 10);
}

TEST_CASE("Pareto front keeps the layouts no other fitting layout beats on both time and cost", "[gui]") {
  auto pt = [](double days, double usd, bool fits) {
    cs::gui::SweepPoint p;
    p.layout = p.valid = true;
    p.fits = fits;
    p.days_to_train = days;
    p.usd_to_train = usd;
    return p;
  };
  std::vector<cs::gui::SweepPoint> v{pt(10, 100, true), pt(20, 50, true), pt(15, 120, true), pt(5, 10, false), pt(30, 50, true)};
  cs::gui::mark_pareto(v);
  CHECK(v[0].pareto);         // fastest fitting
  CHECK(v[1].pareto);         // cheapest fitting
  CHECK_FALSE(v[2].pareto);   // slower and dearer than v[0]
  CHECK_FALSE(v[3].pareto);   // does not fit: never on the front
  CHECK_FALSE(v[4].pareto);   // as cheap as v[1] but slower
}

TEST_CASE("The sweep view runs the layouts and a clicked point loads its layout", "[gui]") {
  MainWindow w;
  w.set_headless(true);
  REQUIRE(w.open_file(scenario("llama3-8b-h100x8.json")));
  REQUIRE(w.set_view("sweep"));
  w.show();
  REQUIRE(w.wait_until_idle(300000));
  const auto points = w.sweep_points();
  REQUIRE(points);
  const auto front = std::count_if(points->begin(), points->end(), [](const auto& p) { return p.pareto; });
  CHECK(front >= 1);
  const auto it = std::find_if(points->begin(), points->end(), [](const auto& p) { return p.valid && !p.current && p.layout; });
  REQUIRE(it != points->end());
  w.load_sweep_point(*it);
  REQUIRE(w.wait_until_idle(300000));
  CHECK(w.current_report()->tp == it->tp);
  CHECK(w.current_report()->pp == it->pp);
  CHECK(w.current_report()->num_gpus == it->gpus);
  CHECK(spin(w, "training.tensor_model_parallel_size")->value() == it->tp);
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
