#pragma once
// Runs the sweep behind the scaling curve and the cost-vs-time view on worker threads, with the same
// generation rule as SimRunner: a newer run() makes the older one stop between points and drop its
// result. Points are handed to the workers one at a time, so a long sweep reports progress.
#include <atomic>
#include <memory>
#include <vector>

#include <QObject>
#include <QThreadPool>

#include <nlohmann/json.hpp>

#include "gui/app/sweep.hpp"

namespace cs::gui {

class SweepRunner : public QObject {
  Q_OBJECT
 public:
  explicit SweepRunner(QObject* parent = nullptr);
  ~SweepRunner() override;

  quint64 run(nlohmann::json doc, std::string file);
  void cancel() { ++latest_; }
  bool busy() const { return running_ > 0; }

 signals:
  void progress(quint64 generation, int done, int total);
  void finished(quint64 generation, std::shared_ptr<const std::vector<cs::gui::SweepPoint>> points);
  void idle();

 private:
  QThreadPool pool_;
  std::atomic<quint64> latest_{0};
  int running_ = 0;
};

}  // namespace cs::gui
