#include "gui/views/goodput_view.hpp"

#include <algorithm>

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QHBoxLayout>
#include <QHorizontalStackedBarSeries>
#include <QValueAxis>
#include <QVBoxLayout>

#include "gui/views/format.hpp"

namespace cs::gui {

GoodputView::GoodputView(QWidget* parent)
    : QWidget(parent), summary_(new QLabel(this)), lost_(new QChartView(new QChart, this)), days_(new QChartView(new QChart, this)) {
  summary_->setObjectName("goodput-summary");
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  style_chart(*lost_, tr("Time lost over the run (hours)"), Qt::AlignBottom, QSize(300, 180));
  style_chart(*days_, tr("Days to train (Monte Carlo of %1 runs)").arg(kGuiMonteCarloRuns), Qt::AlignBottom, QSize(260, 180));
  auto* charts = new QHBoxLayout;
  charts->addWidget(lost_, 3);
  charts->addWidget(days_, 2);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(summary_);
  layout->addLayout(charts, 1);
  show_run(std::nullopt);
}

void GoodputView::show_run(const std::optional<sim::goodput::RunReport>& run) {
  clear_chart(*lost_->chart());
  clear_chart(*days_->chart());
  const bool any = run && (run->resilience || run->data);
  lost_->setVisible(any);
  days_->setVisible(any && run->resilience && run->resilience->runs > 0);
  if (!any) {
    summary_->setText(tr("A step time is for a cluster where nothing goes wrong. Add a \"resilience\" section "
                         "(failures, checkpoints, restarts) or a \"data_pipeline\" section (input stalls) to the "
                         "scenario to see the whole run here (docs/goodput.md)."));
    return;
  }
  QStringList lines;
  double stall_h = 0;
  if (run->data) {
    const auto& d = *run->data;
    lines << tr("Input: %1 of each step stalls on %2 (bottleneck: %3); never stalls at %4 GB/s aggregate.")
                 .arg(QString::number(100 * d.stall_fraction, 'f', 1) + "%", QString::fromStdString(d.source),
                      QString::fromStdString(d.bottleneck), QString::number(d.never_stall_GBps, 'f', 1));
  }
  if (run->resilience) {
    const auto& x = *run->resilience;
    lines << tr("Goodput %1: %2 days to train (%3 useful), %4, %5 expected interruptions (one every %6 h).")
                 .arg(QString::number(100 * x.goodput, 'f', 2) + "%", QString::number(x.expected.total_s / 86400, 'f', 2),
                      QString::number(x.work_s / 86400, 'f', 2), format_usd(x.usd), QString::number(x.expected.failures, 'f', 1),
                      QString::number(x.mtti_hours, 'f', 1));
    lines << tr("Checkpoint every %1 h; the goodput-optimal interval is %2 h (goodput %3).")
                 .arg(QString::number(x.interval_s / 3600, 'f', 2), QString::number(x.optimal_interval_s / 3600, 'f', 2),
                      QString::number(100 * x.goodput_at_optimal, 'f', 2) + "%");
    if (run->data) stall_h = run->data->stall_s * (x.work_s / std::max(run->data->step_with_input_s, 1e-30)) / 3600;
    auto* series = new QHorizontalStackedBarSeries;
    auto add = [&](const QString& name, const QColor& color, double hours) {
      auto* set = new QBarSet(name);
      set->setColor(color);
      *set << hours;
      series->append(set);
    };
    add(tr("rework"), kErrorColor, x.expected.rework_s / 3600);
    add(tr("restarts"), QColor(0xe0, 0x8a, 0x1e), x.expected.restart_s / 3600);
    add(tr("checkpoint stalls"), kComputeColor, x.expected.checkpoint_s / 3600);
    if (run->data) add(tr("input stalls"), kBubbleColor, stall_h);
    lost_->chart()->addSeries(series);
    auto* cats = new QBarCategoryAxis;
    cats->append(tr("lost"));
    lost_->chart()->addAxis(cats, Qt::AlignLeft);
    series->attachAxis(cats);
    auto* hours = new QValueAxis;
    hours->setLabelFormat("%.1f");
    hours->setTitleText(tr("hours"));
    lost_->chart()->addAxis(hours, Qt::AlignBottom);
    series->attachAxis(hours);
    if (x.runs > 0) {
      auto* dist = new QBarSeries;
      auto* set = new QBarSet(tr("days"));
      set->setColor(kComputeColor);
      *set << x.p10_days << x.p50_days << x.p90_days;
      dist->append(set);
      days_->chart()->addSeries(dist);
      auto* q = new QBarCategoryAxis;
      q->append({tr("p10"), tr("p50"), tr("p90")});
      days_->chart()->addAxis(q, Qt::AlignBottom);
      dist->attachAxis(q);
      auto* d = new QValueAxis;
      d->setLabelFormat("%.2f");
      d->setRange(std::min(x.p10_days, x.work_s / 86400) * 0.98, x.p90_days * 1.01);
      days_->chart()->addAxis(d, Qt::AlignLeft);
      dist->attachAxis(d);
      days_->chart()->legend()->hide();
    }
  } else if (run->data) {
    auto* series = new QHorizontalStackedBarSeries;
    auto* set = new QBarSet(tr("input stall per step (ms)"));
    set->setColor(kBubbleColor);
    *set << run->data->stall_s * 1e3;
    series->append(set);
    lost_->chart()->addSeries(series);
    lost_->chart()->createDefaultAxes();
  }
  summary_->setText(lines.join("\n"));
}

}  // namespace cs::gui
