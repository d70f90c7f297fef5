#include "gui/app/cli_command.hpp"

#include <algorithm>

#include <QRegularExpression>
#include <QStringList>

namespace cs::gui {

using nlohmann::json;

namespace {

std::string join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

void diff(const json& was, const json& now, const std::string& path, QStringList& out) {
  if (was == now) return;
  if (was.is_object() && now.is_object()) {
    for (auto it = now.begin(); it != now.end(); ++it)
      diff(was.contains(it.key()) ? was.at(it.key()) : json(), it.value(), join(path, it.key()), out);
    for (auto it = was.begin(); it != was.end(); ++it)
      if (!now.contains(it.key())) out << QString::fromStdString(join(path, it.key()) + "=null");
    return;
  }
  if (was.is_array() && now.is_array() && was.size() == now.size()) {  // jobs.1.training...: by index
    for (std::size_t i = 0; i < now.size(); ++i) diff(was[i], now[i], join(path, std::to_string(i)), out);
    return;
  }
  out << QString::fromStdString(path + "=" + now.dump());
}

}  // namespace

QStringList overrides_between(const json& on_disk, const json& doc) {
  QStringList out;
  diff(on_disk, doc, "", out);
  std::stable_partition(out.begin(), out.end(), [](const QString& a) { return a.startsWith("cluster.topology_file="); });
  return out;
}

QString shell_quote(const QString& word) {
  static const QRegularExpression safe(QStringLiteral("^[A-Za-z0-9_./:,=+@%-]+$"));
  if (safe.match(word).hasMatch()) return word;
  return "'" + QString(word).replace("'", "'\\''") + "'";
}

QString cli_command(const std::string& file, const json& on_disk, const json& doc) {
  QString cmd = "clustersim run " + shell_quote(QString::fromStdString(file));
  for (const QString& a : overrides_between(on_disk, doc)) cmd += " --set " + shell_quote(a);
  return cmd;
}

}  // namespace cs::gui
