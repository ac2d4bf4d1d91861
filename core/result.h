#pragma once
// Results across module boundaries: a value or an error message (std::expected is C++23).

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace fabricwatch::core {

struct Error {
  std::string message;
};

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error e) : v_(std::move(e)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// A Result without a value: ok, or an error.
class Status {
 public:
  Status() = default;
  Status(Error e) : error_(std::move(e)) {}
  static Status Ok() { return Status(); }
  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const std::string& message() const { return error_->message; }

 private:
  std::optional<Error> error_;
};

}  // namespace fabricwatch::core
