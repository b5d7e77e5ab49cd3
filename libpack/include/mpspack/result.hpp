// Errors as values. Every fallible libpack function returns Result<T>; nothing in libpack throws
// across its API or aborts. An Error carries one human-readable line that already names the file,
// object, field, offset and size involved, so the CLI can print it as is.
#pragma once

#include <fmt/format.h>

#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace mpspack {

// What went wrong, as one line. `kind` lets callers tell "not this format" from "corrupt".
struct Error {
  enum class Kind { Io, NotThisFormat, Corrupt, Unsupported, Invalid, Runtime };
  Kind kind = Kind::Invalid;
  std::string message;

  // Prefixes the message with context ("model.so: " + message), keeping the kind.
  Error context(std::string_view prefix) const { return Error{kind, fmt::format("{}: {}", prefix, message)}; }
};

template <class... Args>
Error make_error(Error::Kind kind, fmt::format_string<Args...> f, Args&&... args) {
  return Error{kind, fmt::format(f, std::forward<Args>(args)...)};
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), failed_(true) {}

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool failed_ = false;
};

using Status = Result<void>;

}  // namespace mpspack

// Unwraps a Result into `decl`, or returns its error from the enclosing function.
#define MPK_CONCAT_INNER(a, b) a##b
#define MPK_CONCAT(a, b) MPK_CONCAT_INNER(a, b)
#define MPK_TRY_IMPL(tmp, decl, expr) \
  auto tmp = (expr);                  \
  if (!tmp.ok()) return tmp.error();  \
  decl = std::move(tmp).value()
#define MPK_TRY(decl, expr) MPK_TRY_IMPL(MPK_CONCAT(mpk_try_, __LINE__), decl, expr)
// For Status-returning expressions.
#define MPK_CHECK(expr)                                \
  do {                                                 \
    auto mpk_status_ = (expr);                         \
    if (!mpk_status_.ok()) return mpk_status_.error(); \
  } while (0)
