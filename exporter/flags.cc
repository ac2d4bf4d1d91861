#include "exporter/flags.h"

namespace fabricwatch::exporter {

void FlagSet::add(std::string name, std::string help, std::string default_value) {
  order_.push_back(name);
  flags_[std::move(name)] = Flag{std::move(help), std::move(default_value), false};
}

void FlagSet::addBool(std::string name, std::string help) {
  order_.push_back(name);
  flags_[std::move(name)] = Flag{std::move(help), "", true};
}

std::optional<std::string> FlagSet::parse(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      positional_.insert(positional_.end(), args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    if (a.size() < 3 || a.rfind("--", 0) != 0) {
      positional_.push_back(a);
      continue;
    }
    std::string name = a.substr(2);
    std::optional<std::string> value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    auto it = flags_.find(name);
    if (it == flags_.end()) return "unknown flag --" + name;
    if (it->second.boolean) {
      // --flag, --flag=true|false, or --flag true|false (a separate word that is one of those).
      if (!value && i + 1 < args.size() && (args[i + 1] == "true" || args[i + 1] == "false"))
        value = args[++i];
      if (value && *value != "true" && *value != "false")
        return "flag --" + name + ": expected true or false, got \"" + *value + "\"";
      // Given, a boolean flag is set either way: =false overrides a configuration's true.
      set_[name] = value.value_or("true");
      continue;
    }
    if (!value) {
      if (i + 1 >= args.size()) return "flag --" + name + " needs a value";
      value = args[++i];
    }
    set_[name] = *value;
  }
  return std::nullopt;
}

std::string FlagSet::get(const std::string& name) const {
  if (auto it = set_.find(name); it != set_.end()) return it->second;
  if (auto it = flags_.find(name); it != flags_.end()) return it->second.default_value;
  return {};
}

std::string FlagSet::help() const {
  std::string out = usage_ + "\n";
  if (!order_.empty()) out += "\nFlags:\n";
  for (const auto& name : order_) {
    const Flag& f = flags_.at(name);
    std::string left = "  --" + name + (f.boolean ? "" : "=VALUE");
    if (left.size() < 32)
      left.resize(32, ' ');
    else
      left += "\n" + std::string(32, ' ');
    out += left + f.help;
    if (!f.default_value.empty()) out += " (default: " + f.default_value + ")";
    out += "\n";
  }
  return out;
}

}  // namespace fabricwatch::exporter
