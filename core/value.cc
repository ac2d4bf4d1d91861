#include "core/value.h"

#include "core/utf8.h"

namespace fabricwatch::core {

const Value* Value::find(std::string_view key) const {
  if (!isMap()) return nullptr;
  const auto& m = asMap();
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

const Value* Value::findPath(std::string_view dotted) const {
  const Value* cur = this;
  while (cur != nullptr && !dotted.empty()) {
    size_t dot = dotted.find('.');
    cur = cur->find(dotted.substr(0, dot));
    dotted = dot == std::string_view::npos ? std::string_view() : dotted.substr(dot + 1);
  }
  return cur;
}

Value& Value::operator[](std::string_view key) {
  if (isNull()) v_ = Map{};
  auto& m = asMap();
  auto it = m.find(key);
  if (it == m.end()) it = m.emplace(std::string(key), Value()).first;
  return it->second;
}

Value& Value::push(Value v) {
  if (isNull()) v_ = List{};
  auto& l = asList();
  l.push_back(std::move(v));
  return l.back();
}

void Value::setPath(std::string_view dotted, Value v) {
  Value* cur = this;
  while (true) {
    size_t dot = dotted.find('.');
    if (dot == std::string_view::npos) {
      (*cur)[dotted] = std::move(v);
      return;
    }
    cur = &(*cur)[dotted.substr(0, dot)];
    dotted = dotted.substr(dot + 1);
  }
}

size_t Value::size() const {
  switch (kind()) {
    case Kind::kString:
      return asString().size();
    case Kind::kList:
      return asList().size();
    case Kind::kMap:
      return asMap().size();
    default:
      return 0;
  }
}

const char* kindName(Value::Kind k) {
  switch (k) {
    case Value::Kind::kNull:
      return "null";
    case Value::Kind::kBool:
      return "bool";
    case Value::Kind::kInt:
      return "int";
    case Value::Kind::kDouble:
      return "double";
    case Value::Kind::kString:
      return "string";
    case Value::Kind::kList:
      return "list";
    case Value::Kind::kMap:
      return "map";
  }
  return "?";
}

size_t makeStringsValidUtf8(Value& v) {
  size_t changed = 0;
  if (auto* str = std::get_if<std::string>(&v.v_)) {
    changed += makeValidUtf8(*str);
  } else if (auto* list = std::get_if<Value::List>(&v.v_)) {
    for (auto& item : *list) changed += makeStringsValidUtf8(item);
  } else if (auto* map = std::get_if<Value::Map>(&v.v_)) {
    std::vector<std::string> bad_keys;
    for (auto& [k, child] : *map) {
      changed += makeStringsValidUtf8(child);
      if (!isValidUtf8(k)) bad_keys.push_back(k);
    }
    for (const auto& k : bad_keys) {
      auto node = map->extract(k);
      makeValidUtf8(node.key());
      map->insert_or_assign(node.key(), std::move(node.mapped()));
      ++changed;
    }
  }
  return changed;
}

}  // namespace fabricwatch::core
