#pragma once
// The configuration's tables that belong to what registers itself (a probe kind's
// [probes.<kind>]): each one a struct of its owner's, kept by name. The configuration stays a
// value: copies share a table until one of them edits it (copy on write), and two
// configurations compare equal when every table does.

#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>

#include "core/log.h"

namespace fabricwatch::config {

class Tables {
 public:
  // The table `name` as its owner's struct T: T's defaults when the configuration never set it.
  template <typename T>
  const T& get(std::string_view name) const {
    auto it = tables_.find(name);
    if (it == tables_.end()) {
      static const T kDefaults{};
      return kDefaults;
    }
    checkType(it->second, typeid(T), name);
    return *static_cast<const T*>(it->second.value.get());
  }

  // The table for changing it (the loader's setters): a copy of its own when shared.
  template <typename T>
  T& edit(std::string_view name) {
    auto it = tables_.find(name);
    if (it == tables_.end()) {
      Entry e;
      e.type = &typeid(T);
      e.value = std::make_shared<T>();
      e.equal = [](const void* a, const void* b) {
        return *static_cast<const T*>(a) == *static_cast<const T*>(b);
      };
      e.copy = [](const void* v) -> std::shared_ptr<void> {
        return std::make_shared<T>(*static_cast<const T*>(v));
      };
      e.is_default = [](const void* v) { return *static_cast<const T*>(v) == T{}; };
      it = tables_.emplace(std::string(name), std::move(e)).first;
    }
    checkType(it->second, typeid(T), name);
    if (it->second.value.use_count() > 1)
      it->second.value = it->second.copy(it->second.value.get());
    return *static_cast<T*>(it->second.value.get());
  }

  // A table one side never set equals the other's when that one holds the defaults.
  bool operator==(const Tables& o) const {
    for (const auto& [name, e] : tables_) {
      auto it = o.tables_.find(name);
      if (it == o.tables_.end()) {
        if (!e.is_default(e.value.get())) return false;
      } else if (*it->second.type != *e.type || !e.equal(e.value.get(), it->second.value.get())) {
        return false;
      }
    }
    for (const auto& [name, e] : o.tables_)
      if (!tables_.count(name) && !e.is_default(e.value.get())) return false;
    return true;
  }

 private:
  struct Entry {
    const std::type_info* type = nullptr;
    std::shared_ptr<void> value;
    bool (*equal)(const void*, const void*) = nullptr;
    std::shared_ptr<void> (*copy)(const void*) = nullptr;
    bool (*is_default)(const void*) = nullptr;
  };

  // Two owners registering one table name with different structs is a bug of the binary.
  static void checkType(const Entry& e, const std::type_info& want, std::string_view name) {
    if (*e.type == want) return;
    core::log::error("config", "a table is read as another type than it was stored as",
                     {{"table", name}});
    std::abort();
  }

  std::map<std::string, Entry, std::less<>> tables_;
};

}  // namespace fabricwatch::config
