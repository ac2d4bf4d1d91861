#pragma once
// Writes loaded packs as C++ source: constant EmbeddedPack data (policy/embedded_pack.h) and the
// embeddedPacks() that returns it. Pure: the build's pack compiler (embed_packs_main.cc) does
// the I/O. Strings are written byte for byte (octal escapes for anything but printable ASCII),
// so any UTF-8 or control character in a pack survives.

#include <string>
#include <string_view>

#include "policy/pack.h"

namespace fabricwatch::policy {

// A C++ string literal of `s` followed by its length: "…"sv-safe even with NUL bytes.
std::string cppStringView(std::string_view s);

std::string packSetSource(const PackSet& packs);

}  // namespace fabricwatch::policy
