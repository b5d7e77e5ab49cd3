// The --json outputs match their documented schemas (docs/schema/*.json). No JSON Schema validator
// is packaged for C++ or python3 on Debian 12, so this file carries a small one for exactly the
// keywords those schemas use: type (a name or a list; "integer" excludes fractions), enum,
// required, properties, additionalProperties (false or a schema), items, anyOf. A schema that
// uses any other keyword fails the test, so the validator cannot silently ignore a rule.
#include "cli_runner.hpp"
#include "fixtures.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>
#include <set>

using namespace mpspack::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

bool has_type(const json& v, const std::string& t) {
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  if (t == "string") return v.is_string();
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  if (t == "integer") return v.is_number_integer();
  if (t == "number") return v.is_number();
  return false;
}

// Appends one line per violation ("<path>: <problem>") to `errors`.
void validate(const json& v, const json& schema, const std::string& path, std::vector<std::string>& errors) {
  static const std::set<std::string> known = {"$schema", "$id", "title", "description", "type", "enum", "required",
                                              "properties", "additionalProperties", "items", "anyOf",
                                              "pattern"};
  for (const auto& [key, _] : schema.items())
    if (!known.count(key)) errors.push_back(path + ": schema keyword '" + key + "' is not supported by this validator");
  if (schema.contains("anyOf")) {
    bool any = false;
    for (const auto& branch : schema["anyOf"]) {
      std::vector<std::string> e;
      validate(v, branch, path, e);
      any = any || e.empty();
    }
    if (!any) errors.push_back(path + ": matches none of anyOf");
  }
  if (schema.contains("type")) {
    json types = schema["type"].is_array() ? schema["type"] : json::array({schema["type"]});
    bool ok = false;
    for (const auto& t : types) ok = ok || has_type(v, t.get<std::string>());
    if (!ok) {
      errors.push_back(path + ": is " + v.type_name() + ", expected " + types.dump());
      return;
    }
  }
  if (schema.contains("pattern") && v.is_string() &&
      !std::regex_search(v.get<std::string>(), std::regex(schema["pattern"].get<std::string>())))
    errors.push_back(path + ": " + v.dump() + " does not match " + schema["pattern"].dump());
  if (schema.contains("enum") && std::find(schema["enum"].begin(), schema["enum"].end(), v) == schema["enum"].end())
    errors.push_back(path + ": " + v.dump() + " is not one of " + schema["enum"].dump());
  if (v.is_object()) {
    for (const auto& r : schema.value("required", json::array()))
      if (!v.contains(r.get<std::string>())) errors.push_back(path + ": missing required field '" + r.get<std::string>() + "'");
    const json props = schema.value("properties", json::object());
    for (const auto& [key, val] : v.items()) {
      std::string p = path + "." + key;
      if (props.contains(key)) validate(val, props[key], p, errors);
      else if (schema.contains("additionalProperties")) {
        const json& ap = schema["additionalProperties"];
        if (ap.is_boolean()) {
          if (!ap.get<bool>()) errors.push_back(p + ": field not in the schema");
        } else {
          validate(val, ap, p, errors);
        }
      }
    }
  }
  if (v.is_array() && schema.contains("items"))
    for (size_t i = 0; i < v.size(); ++i) validate(v[i], schema["items"], path + "[" + std::to_string(i) + "]", errors);
}

json load_schema(const std::string& name) {
  auto text = slurp(source_dir() / "docs" / "schema" / (name + ".schema.json"));
  REQUIRE_FALSE(text.empty());
  return json::parse(text);
}

std::vector<std::string> violations(const json& v, const json& schema) {
  std::vector<std::string> e;
  validate(v, schema, "$", e);
  return e;
}

// Runs mpspack, expects `exit_code`, and checks stdout against the named schema.
json check_output(const std::vector<std::string>& args, int exit_code, const std::string& schema) {
  auto r = run_mpspack(args);
  INFO(r.err);
  REQUIRE(r.exit_code == exit_code);
  json j = json::parse(r.out);
  auto e = violations(j, load_schema(schema));
  INFO(j.dump(2));
  for (const auto& line : e) FAIL_CHECK(line);
  CHECK(e.empty());
  return j;
}

}  // namespace

TEST_CASE("the schema validator itself rejects missing fields, wrong types and unknown fields", "[cli][schema]") {
  json s = json::parse(R"({"type":"object","required":["a","b"],"additionalProperties":false,
    "properties":{"a":{"type":"integer"},"b":{"type":"array","items":{"type":["string","null"]}},
                  "c":{"type":"string","enum":["x","y"]}}})");
  CHECK(violations(json::parse(R"({"a":1,"b":["s",null]})"), s).empty());
  CHECK(violations(json::parse(R"({"a":1})"), s).size() == 1);                 // missing b
  CHECK(violations(json::parse(R"({"a":1.5,"b":[]})"), s).size() == 1);        // not an integer
  CHECK(violations(json::parse(R"({"a":"1","b":[]})"), s).size() == 1);        // wrong type
  CHECK(violations(json::parse(R"({"a":1,"b":[3]})"), s).size() == 1);         // item type
  CHECK(violations(json::parse(R"({"a":1,"b":[],"d":0})"), s).size() == 1);    // unknown field
  CHECK(violations(json::parse(R"({"a":1,"b":[],"c":"z"})"), s).size() == 1);  // not in enum
  CHECK(violations(json(1), json::parse(R"({"anyOf":[{"type":"string"},{"type":"null"}]})")).size() == 1);
  CHECK(violations(json(1), json::parse(R"({"minimum":0})")).size() == 1);     // unsupported keyword
  CHECK(violations(json("cuda:0"), json::parse(R"({"pattern":"^(cpu|cuda:[0-9]+)$"})")).empty());
  CHECK(violations(json("cuda:x"), json::parse(R"({"pattern":"^(cpu|cuda:[0-9]+)$"})")).size() == 1);
}

TEST_CASE("every documented schema is valid JSON using only the keywords the validator checks", "[cli][schema]") {
  for (const char* name : {"inspect-container", "inspect-library", "verify", "diff", "bench"}) {
    INFO(name);
    json s = load_schema(name);
    CHECK(s.at("$schema") == "https://json-schema.org/draft/2020-12/schema");
    // Validating null walks only the top level; keyword checks of nested schemas run below on real output.
    std::vector<std::string> e;
    validate(json(nullptr), s, "$", e);
    for (const auto& line : e) CHECK(line.find("not supported") == std::string::npos);
  }
}

TEST_CASE("inspect, verify and diff --json match docs/schema", "[cli][schema][fixtures]") {
  auto pt2 = fixtures_dir() / "pt2" / "pkg.pt2";
  auto blob_dir = fixtures_dir() / "rebuilt-bookworm" / "cpu_mlp_blob";
  auto embedded = fixtures_dir() / "rebuilt-bookworm" / "cpu_mlp_embedded" / "model.so";
  MPK_REQUIRE_FIXTURE(pt2);
  MPK_REQUIRE_FIXTURE(blob_dir);
  MPK_REQUIRE_FIXTURE(embedded);
  TempDir tmp;
  auto a = tmp / "a.mpk", b = tmp / "b.mpk";
  // a: a .pt2 (a constants table) and an embedded library; b: an external-blob library.
  REQUIRE(run_mpspack({"build", pt2.string(), embedded.string(), "-o", a.string()}).exit_code == 0);
  REQUIRE(run_mpspack({"build", (blob_dir / "model.so").string(), "--weights", (blob_dir / "weights.blob").string(),
                       "-o", b.string()}).exit_code == 0);

  SECTION("inspect: a container") {
    auto j = check_output({"inspect", a.string(), "--json"}, 0, "inspect-container");
    CHECK_FALSE(j.at("weights").at(0).at("constants").empty());  // the constants' schema was exercised
    check_output({"inspect", b.string(), "--json"}, 0, "inspect-container");
  }
  SECTION("inspect: a raw library, embedded and external-blob") {
    check_output({"inspect", embedded.string(), "--json"}, 0, "inspect-library");
    auto j = check_output({"inspect", (blob_dir / "model.so").string(), "--json"}, 0, "inspect-library");
    CHECK(j.contains("recorded_blob_size"));
  }
  SECTION("verify: intact, a damaged segment, a damaged header") {
    check_output({"verify", a.string(), "--json"}, 0, "verify");
    std::string bytes = slurp(b);
    bytes[bytes.size() - 1] = char(bytes[bytes.size() - 1] ^ 0xff);  // inside the last segment
    write_bytes(tmp / "seg.mpk", bytes);
    auto j = check_output({"verify", (tmp / "seg.mpk").string(), "--json"}, 1, "verify");
    CHECK(j.contains("segments"));
    bytes = slurp(b);
    bytes[70] = char(bytes[70] ^ 0xff);  // the header checksum
    write_bytes(tmp / "hdr.mpk", bytes);
    check_output({"verify", (tmp / "hdr.mpk").string(), "--json"}, 1, "verify");
  }
  SECTION("diff: same and different") {
    check_output({"diff", a.string(), a.string(), "--json"}, 0, "diff");
    auto j = check_output({"diff", a.string(), b.string(), "--json"}, 1, "diff");
    bool absent_side = false;
    for (const auto& d : j.at("differences")) absent_side = absent_side || d.at("a").is_null() || d.at("b").is_null();
    CHECK(absent_side);  // the null form of a/b was exercised too
  }
}

TEST_CASE("run --bench --format json matches docs/schema/bench.schema.json", "[cli][schema][fixtures]") {
  auto dir = fixtures_dir() / "rebuilt-bookworm" / "cpu_mlp_embedded";
  auto blob_dir = fixtures_dir() / "rebuilt-bookworm" / "cpu_mlp_blob";
  MPK_REQUIRE_FIXTURE(dir);
  MPK_REQUIRE_FIXTURE(blob_dir);
  TempDir tmp;
  const auto mpk = tmp / "e.mpk", blob = tmp / "b.mpk";
  REQUIRE(run_mpspack({"build", (dir / "model.so").string(), "-o", mpk.string()}).exit_code == 0);
  REQUIRE(run_mpspack({"build", (blob_dir / "model.so").string(), "--weights", (blob_dir / "weights.blob").string(),
                       "-o", blob.string()}).exit_code == 0);
  // The fixture's input is recorded in its folder; the spec comes from the manifest (i64 token ids or f32).
  const auto m = json::parse(slurp(fixtures_dir() / "rebuilt-bookworm" / "manifest.json"));
  std::string spec;
  for (const auto& c : m.at("cases"))
    if (c.at("dir") == "cpu_mlp_embedded") {
      const auto& in = c.at("inputs").at(0);
      const std::string dt = in.at("dtype").get<std::string>();
      spec = dt == "torch.int64" ? ":i64:" : ":f32:";
      std::string shape;
      for (const auto& d : in.at("shape")) shape += (shape.empty() ? "" : "x") + std::to_string(d.get<int64_t>());
      spec += shape;
    }
  REQUIRE_FALSE(spec.empty());
  auto j = check_output({"run", "--bench", mpk.string(), "--input", (dir / "input0.bin").string() + spec, "--format",
                         "json", "--iterations", "3", "--export-times", (tmp / "t.json").string()},
                        0, "bench");
  CHECK(j.contains("export_times"));
  j = check_output({"run", "--bench", blob.string(), "--input", (blob_dir / "input0.bin").string() + spec, "--format",
                    "json", "--iterations", "2", "--cold"},
                   0, "bench");
  CHECK(j.contains("cold_cache"));  // the optional object's schema was exercised
  json bad = j;
  bad["latency_ms"].erase("p99");
  CHECK_FALSE(violations(bad, load_schema("bench")).empty());
}

TEST_CASE("a documented field that goes missing or changes type fails the schema", "[cli][schema][fixtures]") {
  auto so = fixtures_dir() / "rebuilt-bookworm" / "cpu_mlp_embedded" / "model.so";
  MPK_REQUIRE_FIXTURE(so);
  TempDir tmp;
  REQUIRE(run_mpspack({"build", so.string(), "-o", (tmp / "m.mpk").string()}).exit_code == 0);
  auto r = run_mpspack({"inspect", (tmp / "m.mpk").string(), "--json"});
  REQUIRE(r.exit_code == 0);
  json good = json::parse(r.out);
  json s = load_schema("inspect-container");
  REQUIRE(violations(good, s).empty());
  json j = good;
  j["libraries"][0].erase("original_sha256");
  CHECK_FALSE(violations(j, s).empty());
  j = good;
  j["header"]["file_size"] = "123";
  CHECK_FALSE(violations(j, s).empty());
  j = good;
  j["segments"][0]["kind"] = "other";
  CHECK_FALSE(violations(j, s).empty());
  j = good;
  j["segments"][0]["surprise"] = 1;
  CHECK_FALSE(violations(j, s).empty());
}

TEST_CASE("build, run, unpack and inspect of a .pt2 --json match docs/schema", "[cli][schema][fixtures]") {
  auto pt2 = fixtures_dir() / "pt2" / "blob.pt2";
  MPK_REQUIRE_FIXTURE(pt2);
  const auto tiny = binary_dir() / "examples" / "tiny_mlp";
  TempDir tmp;
  const auto mpk = tmp / "tiny.mpk";
  auto built = check_output({"build", (tiny / "model.so").string(), "--example-input",
                             (tiny / "input0.bin").string() + ":f32:4x16", "--example-output",
                             (tiny / "expected0.bin").string() + ":f32:4x8", "-o", mpk.string(), "--json"},
                            0, "build");
  CHECK(built.at("libraries") == 1);
  auto ran = check_output({"run", mpk.string(), "--json", "--output", (tmp / "out").string()}, 0, "run");
  CHECK(ran.at("outputs").at(0).at("match") == true);
  CHECK(ran.at("outputs").at(0).contains("written"));
  // A wrong expectation: the comparison's failure fields are in the schema too.
  write_bytes(tmp / "wrong.bin", std::string(4 * 8 * 4, '\0'));
  auto mismatched = check_output({"run", mpk.string(), "--json", "--input", (tiny / "input0.bin").string() + ":f32:4x16",
                                  "--expect", (tmp / "wrong.bin").string() + ":f32:4x8"},
                                 1, "run");
  CHECK(mismatched.at("outputs").at(0).contains("first_mismatch"));
  auto unpacked = check_output({"unpack", mpk.string(), "-o", (tmp / "unpacked").string(), "--json"}, 0, "unpack");
  REQUIRE(unpacked.at("written").size() == 1);
  CHECK(fs::exists(unpacked.at("written").at(0).get<std::string>()));
  auto inspected = check_output({"inspect", pt2.string(), "--json"}, 0, "inspect-pt2");
  CHECK(inspected.at("models").at(0).at("constants").size() == 1);
}
