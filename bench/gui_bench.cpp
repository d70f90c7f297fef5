// clustersim-gui-bench [--quick] [--scenario FILE] [--sweep-scenario FILE]
//
// GUI responsiveness: how long the event loop of the what-if explorer goes without answering while the
// library works on other threads. A 10 ms timer runs on the UI thread (offscreen platform unless
// QT_QPA_PLATFORM is set); each phase prints its wall time, the timer ticks delivered, and the mean,
// 99th-percentile and largest gap between ticks (10 ms is a loop that never waits):
//   simulate  open a large scenario (default scenarios/gpt3-175b-a100x1024.json, >100k tasks) and edit
//             its global batch while the first simulation runs: the edit supersedes it;
//   sweep     the sweep view of a scenario (default scenarios/llama3-70b-h100x64-ndr400.json), whose
//             points sim/explore simulates on all cores but one.
//   cancel    the large scenario at 32768 sequences per step (about 10 s and 1 GB alone), Cancel after
//             1.5 s: the wall time from Cancel until no simulation runs (cancel_ms) is printed after it.
// --quick: the sweep phase on scenarios/llama3-8b-h100x8.json (a one-node sweep, seconds). A number,
// not a test (the GUI test keeps the properties that do not depend on the machine's load).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <QApplication>
#include <QElapsedTimer>
#include <QTimer>

#include "gui/app/main_window.hpp"

namespace {

struct Gaps {
  double wall_s = 0;
  std::vector<qint64> gaps_ms;
};

// Runs `start` with the 10 ms timer ticking, until the window is idle again.
template <class Start>
Gaps measure(cs::gui::MainWindow& w, Start start) {
  QElapsedTimer clock;
  qint64 last = 0;
  Gaps g;
  QTimer timer;
  QObject::connect(&timer, &QTimer::timeout, [&]() {
    const qint64 now = clock.elapsed();
    g.gaps_ms.push_back(now - last);
    last = now;
  });
  clock.start();
  timer.start(10);
  start();
  const bool idle = w.wait_until_idle(10 * 60 * 1000);
  timer.stop();
  g.wall_s = static_cast<double>(clock.elapsed()) / 1000;
  if (!idle) std::fprintf(stderr, "clustersim-gui-bench: timed out waiting for the window to be idle\n");
  return g;
}

void print(const char* phase, const std::string& what, Gaps g) {
  std::sort(g.gaps_ms.begin(), g.gaps_ms.end());
  const std::size_t n = g.gaps_ms.size();
  double mean = 0;
  for (qint64 v : g.gaps_ms) mean += static_cast<double>(v);
  mean = n ? mean / static_cast<double>(n) : 0;
  const qint64 p99 = n ? g.gaps_ms[std::min(n - 1, n * 99 / 100)] : 0;
  const qint64 max = n ? g.gaps_ms.back() : 0;
  std::printf("%-9s  %-42s  %8.2f  %7zu  %11.1f  %10lld  %10lld\n", phase, what.c_str(), g.wall_s, n, mean,
              static_cast<long long>(p99), static_cast<long long>(max));
}

std::string base_name(const QString& path) { return path.section('/', -1).toStdString(); }

}  // namespace

int main(int argc, char** argv) {
  QString big = QStringLiteral(CLUSTERSIM_SOURCE_DIR "/scenarios/gpt3-175b-a100x1024.json");
  QString sweep = QStringLiteral(CLUSTERSIM_SOURCE_DIR "/scenarios/llama3-70b-h100x64-ndr400.json");
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") sweep = QStringLiteral(CLUSTERSIM_SOURCE_DIR "/scenarios/llama3-8b-h100x8.json");
    else if (a == "--scenario" && i + 1 < argc) big = QString::fromLocal8Bit(argv[++i]);
    else if (a == "--sweep-scenario" && i + 1 < argc) sweep = QString::fromLocal8Bit(argv[++i]);
    else {
      std::fprintf(stderr, "usage: clustersim-gui-bench [--quick] [--scenario FILE] [--sweep-scenario FILE]\n");
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  cs::gui::MainWindow w;
  w.set_headless(true);  // no dialogs, and no recovery file is written
  w.show();
  w.wait_until_idle(10 * 60 * 1000);
  std::printf("%-9s  %-42s  %8s  %7s  %11s  %10s  %10s\n", "phase", "scenario", "wall_s", "ticks", "mean_gap_ms",
              "p99_gap_ms", "max_gap_ms");
  QString error;
  const Gaps simulate = measure(w, [&]() {
    if (!w.open_file(big, &error)) return;
    w.apply_overrides({"training.global_batch_size=1024"}, &error);  // supersedes the run in flight
  });
  if (!error.isEmpty()) {
    std::fprintf(stderr, "clustersim-gui-bench: %s\n", qPrintable(error));
    return 2;
  }
  print("simulate", base_name(big) + " + edit", simulate);

  {
    // Cancel: a long simulation stopped 1.5 s in; how long until the worker has unwound and freed it.
    qint64 cancel_ms = -1;
    const Gaps cancelled = measure(w, [&]() {
      w.apply_overrides({"training.global_batch_size=32768"}, &error);
      QElapsedTimer wait;
      wait.start();
      while (wait.elapsed() < 1500) QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
      QElapsedTimer t;
      t.start();
      w.cancel();
      while (w.simulating() && t.elapsed() < 60000) QCoreApplication::processEvents(QEventLoop::AllEvents, 1);
      cancel_ms = t.elapsed();
    });
    print("cancel", base_name(big) + " x32768 seqs, Cancel at 1.5 s", cancelled);
    std::printf("cancel_ms  %lld\n", static_cast<long long>(cancel_ms));
  }

  if (!w.open_file(sweep, &error)) {
    std::fprintf(stderr, "clustersim-gui-bench: %s\n", qPrintable(error));
    return 2;
  }
  w.wait_until_idle(10 * 60 * 1000);  // the main view's simulation first: the sweep is what is timed
  const Gaps swept = measure(w, [&]() { w.set_view("sweep"); });
  const auto result = w.sweep_result();
  std::size_t simulated = 0;
  if (result)
    for (const auto& p : result->points) simulated += p.simulated();
  print("sweep", base_name(sweep) + " (" + std::to_string(simulated) + " simulated)", swept);
  return 0;
}
