#pragma once
// gzip (RFC 1952) for /metrics, built so that the large part of a body can be compressed once
// and shared: a prefix (header + raw deflate blocks ending in a full flush, no final block)
// compressed when a snapshot is published, then per request the small rest as further deflate
// blocks and the trailer (CRC-32 and length of the whole). The result is one ordinary gzip
// member, which every client reads (curl 7.88 stops after the first member of a multi-member
// stream, so concatenated members are not an option).

#include <cstdint>
#include <string>
#include <string_view>

namespace fabricwatch::exporter::gzip {

// The start of a gzip member holding `text`, to be finished by appendEnd().
std::string prefix(std::string_view text, int level = 6);

// Appends `rest` as the final deflate blocks and the trailer of a member whose prefix held
// `prefix_len` bytes of text with CRC-32 `prefix_crc`.
void appendEnd(std::string& out, std::string_view rest, uint32_t prefix_crc, size_t prefix_len);

// A whole gzip member of `text`.
std::string compress(std::string_view text, int level = 6);

uint32_t crc32(std::string_view text);

}  // namespace fabricwatch::exporter::gzip
