#include "device_tracer.h"

#include <cxxabi.h>

#include <cstdlib>
#include <cstring>

namespace flagprof {

const char* eventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::Kernel: return "kernel";
    case EventKind::Memcpy: return "memcpy";
    case EventKind::Memset: return "memset";
    case EventKind::Runtime: return "runtime";
    case EventKind::Driver: return "driver";
  }
  return "unknown";
}

static bool isJsonNumber(const char* s, const char* end) {
  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  if (s < end && *s == '-') ++s;
  if (s >= end) return false;
  if (*s == '0') {
    ++s;
  } else if (*s >= '1' && *s <= '9') {
    while (s < end && *s >= '0' && *s <= '9') ++s;
  } else {
    return false;
  }
  if (s < end && *s == '.') {
    ++s;
    const char* digits = s;
    while (s < end && *s >= '0' && *s <= '9') ++s;
    if (s == digits) return false;
  }
  if (s < end && (*s == 'e' || *s == 'E')) {
    ++s;
    if (s < end && (*s == '+' || *s == '-')) ++s;
    const char* digits = s;
    while (s < end && *s >= '0' && *s <= '9') ++s;
    if (s == digits) return false;
  }
  return s == end;
}

static bool isScalarLiteral(const char* s, const char* end) {
  size_t n = static_cast<size_t>(end - s);
  if ((n == 4 && (!memcmp(s, "true", 4) || !memcmp(s, "null", 4))) || (n == 5 && !memcmp(s, "false", 5)))
    return true;
  return isJsonNumber(s, end);
}

bool metadataValueIsJsonLiteral(const std::string& value) {
  const char* s = value.data();
  const char* end = s + value.size();
  if (s == end) return false;
  if (*s != '[') return isScalarLiteral(s, end);
  // A flat array of scalars, e.g. grid "[8, 16, 5]".
  if (end[-1] != ']') return false;
  ++s;
  --end;
  auto skipSpace = [&](const char* p) {
    while (p < end && *p == ' ') ++p;
    return p;
  };
  s = skipSpace(s);
  if (s == end) return true;
  for (;;) {
    const char* item = s;
    while (s < end && *s != ',') ++s;
    const char* itemEnd = s;
    while (itemEnd > item && itemEnd[-1] == ' ') --itemEnd;
    if (!isScalarLiteral(item, itemEnd)) return false;
    if (s == end) return true;
    s = skipSpace(s + 1);
  }
}

void appendJsonString(std::string& out, const char* text, size_t length) {
  static const char hex[] = "0123456789abcdef";
  out.push_back('"');
  for (size_t i = 0; i < length; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(hex[c >> 4]);
          out.push_back(hex[c & 15]);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

void appendMetadataJson(std::string& out, const std::map<std::string, std::string>& metadata) {
  out.push_back('{');
  bool first = true;
  for (const auto& [key, value] : metadata) {
    if (!first) out += ", ";
    first = false;
    appendJsonString(out, key.data(), key.size());
    out += ": ";
    if (metadataValueIsJsonLiteral(value)) {
      out += value;
    } else {
      appendJsonString(out, value.data(), value.size());
    }
  }
  out.push_back('}');
}

std::string demangle(const std::string& name) {
  // Only Itanium-mangled names; abi::__cxa_demangle would also "demangle" plain words like "i" into types.
  if (name.size() < 3 || name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) {
    std::free(out);
    return name;
  }
  std::string result(out);
  std::free(out);
  return result;
}

}  // namespace flagprof
