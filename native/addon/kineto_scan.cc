// The Kineto JSON event scanner (see kineto_scan.h). Every rule here is the TypeScript parser's
// (extension/import/kineto.ts and bytes.ts), rule for rule: where that parser would warn, count, tolerate or
// fail, this one hands the event back instead, and the TypeScript parser reads it.
#include "kineto_scan.h"

#include <cmath>
#include <cstring>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace flagprof::kineto {
namespace {

constexpr int64_t kIncomplete = -1;
// The event is the TypeScript parser's to read (a rule of its that this scanner does not copy).
constexpr int64_t kHandBack = -2;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

inline bool isSpace(uint8_t c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Kineto writes its traces indented (about a third of a trace's bytes are the indentation), and its names run
// long (kernel signatures): the whitespace and string scans take 16 bytes a step where SSE2 is there (every
// x86-64), with the same result as the byte loops below them.
inline size_t skipWhitespace(const uint8_t* b, size_t p, size_t end) {
  if (p < end && !isSpace(b[p])) return p;  // the common case: one byte, or none
#if defined(__SSE2__)
  const __m128i space = _mm_set1_epi8(' ');
  while (p + 16 <= end) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + p));
    const unsigned spaces = unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(v, space)));
    if (spaces != 0xFFFF) {
      p += unsigned(__builtin_ctz(~spaces));
      if (!isSpace(b[p])) return p;
      p++;  // a newline or tab: go on
    } else {
      p += 16;
    }
  }
#endif
  while (p < end && isSpace(b[p])) p++;
  return p;
}

// p at the opening quote; the index of the closing quote, or kIncomplete.
inline int64_t scanString(const uint8_t* b, size_t p, size_t end) {
  p++;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  while (p + 16 <= end) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + p));
    const unsigned hits =
        unsigned(_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash))));
    if (hits == 0) {
      p += 16;
      continue;
    }
    p += unsigned(__builtin_ctz(hits));
    if (b[p] == '"') return int64_t(p);
    p += 2;  // an escape: the byte after the backslash is never the end
  }
#endif
  while (p < end) {
    const uint8_t c = b[p];
    if (c == '"') return int64_t(p);
    p += c == '\\' ? 2 : 1;
  }
  return kIncomplete;
}

inline bool isDelimiter(uint8_t c) {
  return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == ':';
}

inline int64_t scanBareToken(const uint8_t* b, size_t p, size_t end) {
  while (p < end) {
    if (isDelimiter(b[p])) return int64_t(p);
    p++;
  }
  return kIncomplete;
}

inline bool isDigit(uint8_t c) { return c >= '0' && c <= '9'; }

bool isJsonLiteral(const uint8_t* b, size_t start, size_t end) {
  const uint8_t c = b[start];
  if (c == '-' || isDigit(c)) {
    size_t i = start;
    if (b[i] == '-') i++;
    size_t digits = 0;
    while (i < end && isDigit(b[i])) i++, digits++;
    if (digits == 0) return false;
    if (i < end && b[i] == '.') {
      i++;
      size_t frac = 0;
      while (i < end && isDigit(b[i])) i++, frac++;
      if (frac == 0) return false;
    }
    if (i < end && (b[i] == 'e' || b[i] == 'E')) {
      i++;
      if (i < end && (b[i] == '+' || b[i] == '-')) i++;
      size_t exp = 0;
      while (i < end && isDigit(b[i])) i++, exp++;
      if (exp == 0) return false;
    }
    return i == end;
  }
  const size_t n = end - start;
  return (n == 4 && std::memcmp(b + start, "true", 4) == 0) || (n == 5 && std::memcmp(b + start, "false", 5) == 0) ||
         (n == 4 && std::memcmp(b + start, "null", 4) == 0);
}

enum class Time { Bad, Ok, Exponent };

// bytes.ts parseTime, in the same double arithmetic (so the same bits); exponent notation is handed back.
Time parseTime(const uint8_t* b, size_t p, size_t end, double& us, double& fracNs) {
  size_t i = p;
  bool negative = false;
  if (i < end && b[i] == '-') {
    negative = true;
    i++;
  }
  double intPart = 0;
  size_t digits = 0;
  while (i < end && isDigit(b[i])) {
    intPart = intPart * 10 + double(b[i] - '0');
    i++;
    digits++;
  }
  double frac = 0;
  double scale = 1;
  if (i < end && b[i] == '.') {
    i++;
    while (i < end && isDigit(b[i])) {
      if (scale < 1e12) {
        frac = frac * 10 + double(b[i] - '0');
        scale *= 10;
      }
      i++;
      digits++;
    }
  }
  if (digits == 0) return Time::Bad;
  if (i < end && (b[i] == 'e' || b[i] == 'E')) return Time::Exponent;
  if (i != end) return Time::Bad;
  double ns = (frac / scale) * 1000;
  if (negative) {
    intPart = -intPart;
    if (ns > 0) {
      intPart -= 1;
      ns = 1000 - ns;
    }
  }
  us = intPart;
  fracNs = ns;
  return Time::Ok;
}

// A time value [p, next) as stringOrToken found it: bare, or inside quotes (as Ascend writes timestamps).
inline Time parseTimeValue(const uint8_t* b, size_t p, size_t next, double& us, double& fracNs) {
  const bool quoted = b[p] == '"';
  return parseTime(b, quoted ? p + 1 : p, quoted ? next - 1 : next, us, fracNs);
}

// bytes.ts skipValue; a bare non-JSON value (which the parser reports) or a syntax problem is handed back.
int64_t skipValue(const uint8_t* b, size_t p, size_t end) {
  const uint8_t c = b[p];
  if (c == '"') {
    const int64_t q = scanString(b, p, end);
    return q == kIncomplete ? kIncomplete : q + 1;
  }
  if (c != '{' && c != '[') {
    const int64_t e = scanBareToken(b, p, end);
    if (e == kIncomplete) return kIncomplete;
    if (size_t(e) == p || !isJsonLiteral(b, p, size_t(e))) return kHandBack;
    return e;
  }
  int depth = 0;
  while (p < end) {
    const uint8_t ch = b[p];
    if (ch == '"') {
      const int64_t q = scanString(b, p, end);
      if (q == kIncomplete) return kIncomplete;
      p = size_t(q) + 1;
      continue;
    }
    if (ch == '{' || ch == '[') {
      depth++;
      p++;
      continue;
    }
    if (ch == '}' || ch == ']') {
      depth--;
      p++;
      if (depth == 0) return int64_t(p);
      continue;
    }
    if (ch == ':' || ch == ',') {
      p++;
      continue;
    }
    if (isSpace(ch)) {
      p = skipWhitespace(b, p + 1, end);
      continue;
    }
    const int64_t e = scanBareToken(b, p, end);
    if (e == kIncomplete) return kIncomplete;
    if (size_t(e) == p || !isJsonLiteral(b, p, size_t(e))) return kHandBack;
    p = size_t(e);
  }
  return kIncomplete;
}

// kineto.ts stringOrToken: a string, or a bare token of any text (containers are handed back).
inline int64_t stringOrToken(const uint8_t* b, size_t p, size_t end) {
  if (b[p] == '"') {
    const int64_t q = scanString(b, p, end);
    return q == kIncomplete ? kIncomplete : q + 1;
  }
  if (b[p] == '{' || b[p] == '[') return kHandBack;
  const int64_t e = scanBareToken(b, p, end);
  if (e == kIncomplete) return kIncomplete;
  return size_t(e) == p ? kHandBack : e;
}

uint64_t hashBytes(const uint8_t* p, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t(n) * 0xD6E8FEB86659FD93ull);
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    h = (h ^ v) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  uint64_t v = 0;
  std::memcpy(&v, p, n);
  h = (h ^ v) * 0x94D049BB133111EBull;
  h ^= h >> 32;
  return h;
}

// One event's fields, as kineto.ts parseEvent keeps them.
struct Event {
  uint8_t ph = 0;
  int64_t cat = -1;
  uint32_t name = 0;
  int64_t pid = -1;
  int64_t tid = -1;
  double tsUs = kNaN;
  double tsFracNs = 0;
  double durNs = kNaN;
  int64_t id = -1;
  int64_t argsStart = -1;
  int64_t argsEnd = -1;
  double correlation = kNaN;
  double externalId = kNaN;
  int64_t stackStart = -1;
  int64_t stackEnd = -1;
  bool siteSeen = false;
};

// kineto.ts parseArgs: the ids of seed 000 §2 and where a "Call stack" lies; the rest stays raw.
int64_t parseArgs(const uint8_t* b, size_t start, size_t end, Event& ev) {
  ev.stackStart = -1;
  ev.siteSeen = false;
  size_t p = start + 1;
  bool needComma = false;
  for (;;) {
    p = skipWhitespace(b, p, end);
    if (p >= end) return kIncomplete;
    const uint8_t c = b[p];
    if (c == '}') return int64_t(p) + 1;
    if (c == ',' && needComma) {
      p++;
      needComma = false;
      continue;
    }
    if (needComma || c != '"') return kHandBack;
    needComma = true;
    const int64_t keyEnd = scanString(b, p, end);
    if (keyEnd == kIncomplete) return kIncomplete;
    const size_t k = p + 1;
    const size_t klen = size_t(keyEnd) - k;
    p = skipWhitespace(b, size_t(keyEnd) + 1, end);
    if (p >= end) return kIncomplete;
    if (b[p] != ':') return kHandBack;
    p = skipWhitespace(b, p + 1, end);
    if (p >= end) return kIncomplete;
    int which = 0;
    if (klen == 11) {
      const uint8_t k0 = b[k];
      if ((k0 == 'E' || k0 == 'e') && b[k + 1] == 'x' && b[k + 9] == 'i' && b[k + 10] == 'd') {
        which = k0 == 'E' ? 1 : 2;  // "External id" / "external id"
      } else if (k0 == 'c' && b[k + 1] == 'o' && b[k + 10] == 'n' && b[k + 4] == 'e') {
        which = 3;  // "correlation"
      }
    } else if (klen == 10 && b[k] == 'C' && b[k + 1] == 'a' && b[k + 4] == ' ' && b[k + 9] == 'k') {
      which = 4;  // "Call stack"
    } else if (klen == 9 && b[k] == 'C' && b[k + 4] == ' ' && b[k + 5] == 's' && b[k + 8] == 'e') {
      ev.siteSeen = true;  // "Call site"
    }
    const size_t vs = p;
    const int64_t next = skipValue(b, p, end);
    if (next < 0) return next;
    if (which == 4) {
      const bool quoted = b[vs] == '"';
      ev.stackStart = quoted ? int64_t(vs) + 1 : b[vs] == 'n' ? -1 : -2;
      ev.stackEnd = quoted ? next - 1 : -1;
    } else if (which != 0) {
      const bool quoted = b[vs] == '"';
      const size_t s = quoted ? vs + 1 : vs;
      const size_t e = quoted ? size_t(next) - 1 : size_t(next);
      double us = 0, frac = 0;
      if (isJsonLiteral(b, s, e)) {
        const Time t = parseTime(b, s, e, us, frac);
        if (t == Time::Exponent) return kHandBack;
        if (t == Time::Ok) {
          if (which == 3) ev.correlation = us;
          else if (which == 1 || std::isnan(ev.externalId)) ev.externalId = us;
        }
      }
    }
    p = size_t(next);
  }
}

}  // namespace

uint32_t KinetoScanner::intern(const uint8_t* buf, size_t start, size_t end, ScanHost& host) {
  const size_t n = end - start;
  const uint64_t h = hashBytes(buf + start, n);
  size_t mask = slots_.size() - 1;
  size_t slot = size_t(h) & mask;
  for (;;) {
    const int32_t at = slots_[slot];
    if (at < 0) break;
    const Entry& e = entries_[size_t(at)];
    if (e.hash == h && e.length == n && std::memcmp(arena_.data() + e.offset, buf + start, n) == 0) return e.id;
    slot = (slot + 1) & mask;
  }
  const uint32_t id = host.internBytes(start, end);
  entries_.push_back({h, arena_.size(), n, id});
  arena_.append(reinterpret_cast<const char*>(buf + start), n);
  slots_[slot] = int32_t(entries_.size() - 1);
  if (entries_.size() * 2 > slots_.size()) {
    std::vector<int32_t> next(slots_.size() * 2, -1);
    mask = next.size() - 1;
    for (size_t i = 0; i < entries_.size(); i++) {
      size_t s = size_t(entries_[i].hash) & mask;
      while (next[s] >= 0) s = (s + 1) & mask;
      next[s] = int32_t(i);
    }
    slots_.swap(next);
  }
  return id;
}

uint32_t KinetoScanner::track(uint32_t pid, uint32_t tid, ScanHost& host) {
  const uint64_t key = (uint64_t(pid) << 32) | tid;
  if (key == lastTrackKey_) return lastTrack_;
  auto it = tracks_.find(key);
  const uint32_t t = it != tracks_.end() ? it->second : (tracks_[key] = host.trackFor(pid, tid));
  lastTrackKey_ = key;
  lastTrack_ = t;
  return t;
}

uint8_t KinetoScanner::kind(int64_t cat, ScanHost& host) {
  if (cat < 0) return otherKind_;
  if (size_t(cat) >= kinds_.size()) kinds_.resize(size_t(cat) + 1, -1);
  if (kinds_[size_t(cat)] < 0) kinds_[size_t(cat)] = host.kindOf(uint32_t(cat));
  return uint8_t(kinds_[size_t(cat)]);
}

ScanResult KinetoScanner::scan(const uint8_t* b, size_t pos, size_t end, ScanState& state, const ScanLimits& limits,
                               SliceColumns& slices, FlowColumns& flows, ArgsColumns& args, StackNotes& notes,
                               StackNotes& meta, ScanHost& host) {
  size_t p = pos;
  for (;;) {
    p = skipWhitespace(b, p, end);
    if (p >= end) return {p, Stop::End, 0, 0};
    const uint8_t c0 = b[p];
    if (state.afterElement) {
      if (c0 != ',') return {p, Stop::Structure, 0, 0};
      state.afterElement = false;
      p++;
      continue;
    }
    if (c0 == ',') {  // a stray comma, as the parser tolerates
      p++;
      continue;
    }
    if (c0 != '{') return {p, Stop::Structure, 0, 0};

    // One event, kineto.ts parseEvent.
    const size_t start = p;
    Event ev;
    int64_t r = 0;
    p = start + 1;
    bool needComma = false;
    for (;;) {
      p = skipWhitespace(b, p, end);
      if (p >= end) {
        r = kIncomplete;
        break;
      }
      uint8_t c = b[p];
      if (c == '}') {
        p++;
        break;
      }
      if (c == ',' && needComma) {
        p++;
        needComma = false;
        continue;
      }
      if (needComma || c != '"') {
        r = kHandBack;
        break;
      }
      needComma = true;
      const int64_t keyEnd = scanString(b, p, end);
      if (keyEnd == kIncomplete) {
        r = kIncomplete;
        break;
      }
      const size_t k = p + 1;
      const size_t klen = size_t(keyEnd) - k;
      p = skipWhitespace(b, size_t(keyEnd) + 1, end);
      if (p >= end) {
        r = kIncomplete;
        break;
      }
      if (b[p] != ':') {
        r = kHandBack;
        break;
      }
      p = skipWhitespace(b, p + 1, end);
      if (p >= end) {
        r = kIncomplete;
        break;
      }
      c = b[p];
      int64_t next;
      const uint8_t k0 = b[k];
      const uint8_t k1 = klen > 1 ? b[k + 1] : 0;
      const bool quoted = c == '"';
      if (klen == 2 && k0 == 'p' && k1 == 'h') {
        next = stringOrToken(b, p, end);
        if (next >= 0) ev.ph = quoted ? b[p + 1] : c;
      } else if (klen == 2 && k0 == 't' && k1 == 's') {
        next = stringOrToken(b, p, end);
        // A "ts" that is not a decimal number is counted and reported by the parser.
        if (next >= 0 && parseTimeValue(b, p, size_t(next), ev.tsUs, ev.tsFracNs) != Time::Ok) next = kHandBack;
      } else if (klen == 2 && k0 == 'i' && k1 == 'd') {
        next = stringOrToken(b, p, end);
        if (next >= 0) ev.id = quoted ? intern(b, p + 1, size_t(next) - 1, host) : intern(b, p, size_t(next), host);
      } else if (klen == 3 && b[k + 2] == 'd' && k1 == 'i' && (k0 == 'p' || k0 == 't')) {
        next = stringOrToken(b, p, end);
        if (next >= 0) {
          const int64_t tok = quoted ? intern(b, p + 1, size_t(next) - 1, host) : intern(b, p, size_t(next), host);
          if (k0 == 'p') ev.pid = tok;
          else ev.tid = tok;
        }
      } else if (klen == 3 && k0 == 'c' && k1 == 'a' && b[k + 2] == 't') {
        if (!quoted) {
          next = kHandBack;
        } else {
          const int64_t q = scanString(b, p, end);
          next = q;
          if (q >= 0) {
            ev.cat = intern(b, p + 1, size_t(q), host);
            next = q + 1;
          }
        }
      } else if (klen == 3 && k0 == 'd' && k1 == 'u' && b[k + 2] == 'r') {
        next = stringOrToken(b, p, end);
        double us = 0, frac = 0;
        if (next >= 0 && parseTimeValue(b, p, size_t(next), us, frac) != Time::Ok) next = kHandBack;
        else if (next >= 0) ev.durNs = us * 1000 + frac;
      } else if (klen == 4 && std::memcmp(b + k, "name", 4) == 0) {
        if (!quoted) {
          next = kHandBack;
        } else {
          const int64_t q = scanString(b, p, end);
          next = q;
          if (q >= 0) {
            // A quote not followed by what may follow a value: the parser's unescaped-quote rule.
            const size_t after = skipWhitespace(b, size_t(q) + 1, end);
            if (after >= end) next = kIncomplete;
            else if (b[after] != ',' && b[after] != '}') next = kHandBack;
            else {
              ev.name = intern(b, p + 1, size_t(q), host);
              next = q + 1;
            }
          }
        }
      } else if (klen == 4 && std::memcmp(b + k, "args", 4) == 0) {
        if (c != '{') {
          next = kHandBack;
        } else {
          next = parseArgs(b, p, end, ev);
          if (next >= 0) {
            ev.argsStart = int64_t(p);
            ev.argsEnd = next;
          }
        }
      } else {
        next = skipValue(b, p, end);
      }
      if (next < 0) {
        r = next;
        break;
      }
      p = size_t(next);
    }
    if (r == kIncomplete) return {start, Stop::Incomplete, 0, 0};
    if (r == kHandBack) return {start, Stop::HandBack, 0, 0};
    if (double(p - start) > limits.maxValue) return {start, Stop::HandBack, 0, 0};

    // kineto.ts emitEvent, for the events this scanner takes.
    const uint8_t ph = ev.ph;
    const bool slice = ph == 'X' || ph == 'i' || ph == 'I' || ph == 'n';
    const bool flow = ph == 's' || ph == 'f' || ph == 't';
    if (state.eventCount + 1 > limits.maxEvents) return {start, Stop::HandBack, 0, 0};
    if (ph == 'M') {  // before the time: metadata needs none
      if (meta.length + kMetaWidth > meta.capacity) return {start, Stop::Full, kMetaFull, 0};
      state.eventCount += 1;
      double* v = meta.values + meta.length;
      v[0] = ev.name;
      v[1] = double(ev.pid);
      v[2] = double(ev.tid);
      v[3] = double(ev.argsStart);
      v[4] = double(ev.argsEnd);
      meta.length += kMetaWidth;
      state.afterElement = true;
      continue;
    }
    if (ph == 'B' || ph == 'E' || ph == 'C' || std::isnan(ev.tsUs) ||
        (slice && double(slices.length) >= limits.maxSlices))
      return {start, Stop::HandBack, 0, 0};
    const bool storeArgs = slice && ev.argsStart >= 0 && ev.argsEnd - ev.argsStart > 2;
    const size_t argsBytes = storeArgs ? size_t(ev.argsEnd - ev.argsStart) : 0;
    const bool note = slice && (ev.siteSeen || (ev.stackStart != -1 && ev.stackEnd != ev.stackStart));
    int full = 0;
    if (slice && slices.length >= slices.capacity) full |= kSlicesFull;
    if (flow && flows.length >= flows.capacity) full |= kFlowsFull;
    if (storeArgs && (args.used + argsBytes > args.byteCapacity || args.count + 2 > args.offsetCapacity))
      full |= kArgsFull;
    if (note && notes.length + kNoteWidth > notes.capacity) full |= kNotesFull;
    if (full) return {start, Stop::Full, full, argsBytes};

    state.eventCount += 1;
    if (slice || flow) {
      const uint32_t t = track(ev.pid < 0 ? 0 : uint32_t(ev.pid), ev.tid < 0 ? 0 : uint32_t(ev.tid), host);
      if (std::isnan(state.originUs)) state.originUs = ev.tsUs;
      const double rel = (ev.tsUs - state.originUs) * 1000 + ev.tsFracNs;
      const uint32_t cat = ev.cat < 0 ? 0 : uint32_t(ev.cat);
      if (slice) {
        int32_t argsIndex = -1;
        if (storeArgs) {
          std::memcpy(args.bytes + args.used, b + ev.argsStart, argsBytes);
          args.offsets[args.count] = double(args.used);
          args.used += argsBytes;
          args.offsets[args.count + 1] = double(args.used);
          argsIndex = int32_t(args.count++);
        }
        const bool instant = ph != 'X';
        const double dur = instant || std::isnan(ev.durNs) ? 0 : (ev.durNs > 0 ? ev.durNs : 0);
        const uint8_t k = instant ? instantKind_ : kind(ev.cat, host);
        if (note) {
          const bool absent = ev.stackStart == -1 || ev.stackEnd == ev.stackStart;
          const bool string = ev.stackStart >= 0;
          double* v = notes.values + notes.length;
          v[0] = k;
          v[1] = argsIndex;
          v[2] = absent ? 1 : 0;
          v[3] = string ? double(ev.stackStart - ev.argsStart) : -1;
          v[4] = string ? double(ev.stackEnd - ev.stackStart) : 0;
          v[5] = ev.externalId;
          v[6] = ev.siteSeen ? 1 : 0;
          notes.length += kNoteWidth;
        }
        const size_t i = slices.length++;
        slices.kind[i] = k;
        slices.track[i] = t;
        slices.start[i] = rel;
        slices.dur[i] = dur;
        slices.name[i] = ev.name;
        slices.cat[i] = cat;
        slices.correlation[i] = ev.correlation;
        slices.externalId[i] = ev.externalId;
        slices.parent[i] = -1;
        slices.args[i] = argsIndex;
      } else {
        const size_t i = flows.length++;
        flows.cat[i] = cat;
        flows.id[i] = ev.id < 0 ? 0 : uint32_t(ev.id);
        flows.phase[i] = ph == 's' ? 0 : ph == 'f' ? 1 : 2;
        flows.ts[i] = rel;
        flows.track[i] = t;
        flows.slice[i] = -1;
      }
    }
    state.afterElement = true;
  }
}

}  // namespace flagprof::kineto
