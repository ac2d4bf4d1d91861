#pragma once
// Command-line flags in the Prometheus exporter style: --name=value or --name value, dotted
// names (--web.listen-address), boolean flags with or without a value (--x, --x=false, --x true).
// Unknown flags are usage errors.

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fabricwatch::exporter {

class FlagSet {
 public:
  explicit FlagSet(std::string usage) : usage_(std::move(usage)) {}

  void add(std::string name, std::string help, std::string default_value = "");
  void addBool(std::string name, std::string help);

  // Returns an error message on bad input.
  std::optional<std::string> parse(const std::vector<std::string>& args);

  bool isSet(const std::string& name) const { return set_.count(name) > 0; }
  std::string get(const std::string& name) const;
  bool getBool(const std::string& name) const { return get(name) == "true"; }
  const std::vector<std::string>& positional() const { return positional_; }
  std::string help() const;

 private:
  struct Flag {
    std::string help;
    std::string default_value;
    bool boolean = false;
  };
  std::string usage_;
  std::map<std::string, Flag> flags_;
  std::vector<std::string> order_;
  std::map<std::string, std::string> set_;
  std::vector<std::string> positional_;
};

}  // namespace fabricwatch::exporter
