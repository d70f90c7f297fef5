#pragma once
// Edit → Copy as CLI command: the `clustersim run` command line that simulates the document as the GUI
// shows it, the scenario file followed by a `--set path=value` for every value the edits changed (JSON values,
// so a string stays a string: name="run 2"), a key the edits removed as `path=null` (an absent key, as the
// scenario reader treats null), each word quoted for a POSIX shell.
#include <string>

#include <QString>

#include <nlohmann/json.hpp>

namespace cs::gui {

// The assignments that turn `on_disk` into `doc`, in path order; cluster.topology_file first (setting it
// drops the cluster's wiring and counts, sim::apply_override, so the keys set after it stay).
QStringList overrides_between(const nlohmann::json& on_disk, const nlohmann::json& doc);
// 'word' with each ' written '\'' (bare when it has only characters a shell leaves alone).
QString shell_quote(const QString& word);
// "clustersim run FILE --set A --set B ...".
QString cli_command(const std::string& file, const nlohmann::json& on_disk, const nlohmann::json& doc);

}  // namespace cs::gui
