#pragma once
// One name table per enum: the names users type (scenario JSON, --set, --network) and the value each
// stands for. The loader parses with it, the report prints with it, the GUI and `clustersim params`
// list it; no second copy of the names anywhere. Several names may stand for one value (aliases, e.g.
// attention_backend "auto" and "fused"); the first name of a value is the one printed.
#include <array>
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cs::sim {

template <class E>
struct Named {
  E value;
  std::string_view name;
};

template <class E, std::size_t N>
constexpr std::optional<E> parse_name(const std::array<Named<E>, N>& table, std::string_view name) {
  for (const auto& n : table)
    if (n.name == name) return n.value;
  return std::nullopt;
}

template <class E, std::size_t N>
constexpr std::string_view name_of(const std::array<Named<E>, N>& table, E value) {
  for (const auto& n : table)
    if (n.value == value) return n.name;
  return "?";
}

// Position of a value's first name in the table: the table's order (e.g. recompute none < selective < full).
template <class E, std::size_t N>
constexpr int rank_of(const std::array<Named<E>, N>& table, E value) {
  for (std::size_t i = 0; i < N; ++i)
    if (table[i].value == value) return static_cast<int>(i);
  return -1;
}

template <class E, std::size_t N>
std::vector<std::string> names_of(const std::array<Named<E>, N>& table) {
  std::vector<std::string> out;
  for (const auto& n : table) out.emplace_back(n.name);
  return out;
}

// Catalogs of specs with a `name` member (GPUs, NIC links, node fabrics, model presets): the spec of a
// name (nullptr when none) and the names in catalog order, for lookups and for "known: ..." messages.
template <class Catalog>
constexpr auto find_named(const Catalog& catalog, std::string_view name) -> decltype(&*std::begin(catalog)) {
  for (const auto& spec : catalog)
    if (spec.name == name) return &spec;
  return nullptr;
}

template <class Catalog>
std::vector<std::string> names_in(const Catalog& catalog) {
  std::vector<std::string> names;
  for (const auto& spec : catalog) names.emplace_back(spec.name);
  return names;
}

}  // namespace cs::sim
