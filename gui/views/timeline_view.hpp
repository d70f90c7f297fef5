#pragma once
// The step's timeline: a Gantt chart with one row per simulated rank and stream, one bar per task while
// it runs, coloured by kind (compute, recompute, optimizer, TP/CP/EP/DP/PP communication).
//
// Wheel zooms around the cursor, Shift+wheel scrolls the rows, dragging pans, double-click shows the
// whole step, hovering names the task; with the keyboard (click the timeline first): + and - zoom, Left
// and Right pan, Home or 0 shows the whole step, Up/Down/PageUp/PageDown scroll the rows. The label
// column is as wide as the longest row label (a 5-digit GPU id is not cut); colours follow the palette. Painting is bounded by the viewport, not by the task count: each row's bars are sorted, so the
// visible window is found by binary search, and bars narrower than a pixel are merged with their
// neighbours into one rectangle coloured by the kind that covers most of it, as tall as the share of it
// the tasks cover, so a stream busy 30 % of a stretch is a low bar there, not a solid one. A row therefore never
// draws more rectangles than the view is wide, and a step with hundreds of thousands of tasks stays
// smooth.
#include <memory>

#include <QAbstractScrollArea>

#include "gui/app/sim_outcome.hpp"

namespace cs::gui {

class TimelineView : public QAbstractScrollArea {
  Q_OBJECT
 public:
  explicit TimelineView(QWidget* parent = nullptr);
  void show_timeline(std::shared_ptr<const TimelineData> timeline);
  void reset_zoom();
  void zoom(double factor, double anchor_fraction = 0.5);  // factor > 1 zooms in
  // Visible window, picoseconds.
  double window_start() const { return t0_; }
  double window_end() const { return t1_; }
  int label_width() const { return label_width_; }
  // Moves the window by `fraction` of its width (negative: earlier).
  void pan(double fraction);
  // Rectangles drawn by the last paint (tests check the merging keeps this bounded).
  long long last_paint_rects() const { return last_rects_; }
  static QWidget* make_legend(QWidget* parent);

 protected:
  void paintEvent(QPaintEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;
  void scrollContentsBy(int dx, int dy) override;
  bool viewportEvent(QEvent* e) override;

 private:
  void update_scrollbars();
  double plot_width() const;
  double x_of(double t) const;
  double t_of(double x) const;
  int row_at(int y) const;

  std::shared_ptr<const TimelineData> data_;
  double t0_ = 0, t1_ = 1;
  int row_height_ = 16;
  int label_width_ = 200;
  int header_height_ = 22;
  bool dragging_ = false;
  QPoint drag_origin_;
  double drag_t0_ = 0;
  bool syncing_ = false;
  long long last_rects_ = 0;
};

}  // namespace cs::gui
