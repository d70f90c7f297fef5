#pragma once
// The one line the scenario loader refuses a document with (cs::InputError carrying one message), for
// tests of refusals; the test fails if the document is accepted or refused with more than one line.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "sim/base/input_error.hpp"
#include "sim/scenario/scenario.hpp"

inline std::string refusal(const nlohmann::json& doc, const std::string& file = "f.json") {
  try {
    cs::sim::parse_scenario(doc, file);
  } catch (const cs::InputError& e) {
    REQUIRE(e.messages().size() == 1);
    return e.messages().front();
  }
  FAIL("the scenario was accepted");
  return "";
}
