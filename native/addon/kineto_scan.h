// The Kineto JSON event scanner: the addon's fast path for the trace importer (extension/import/kineto.ts).
//
// It reads the events of a "traceEvents" array straight from bytes into the Profile's columns, exactly as the
// TypeScript parser does for the events it takes. It takes only the regular ones (X, i, I, n slices; s, f, t
// flow halves; metadata, whose args the parser reads; events it counts but does not model) and hands every other
// event back unread: B/E,
// counters, bare non-JSON values, a "ts" that is not a decimal number, a name with an unescaped quote, syntax
// errors, limits. The TypeScript parser reads those, with its warnings and errors, so the two paths make the same
// model byte for byte. Strings, tracks and category kinds stay the TypeScript side's: the scanner caches them and
// asks (ScanHost) only on a miss, so ids are given in the same order as the TypeScript parser gives them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace flagprof::kineto {

// What the scanner asks of the importer, only for what it has not seen yet.
class ScanHost {
 public:
  virtual ~ScanHost() = default;
  // The string id of the JSON string content buf[start, end) (escapes still written).
  virtual uint32_t internBytes(size_t start, size_t end) = 0;
  virtual uint32_t trackFor(uint32_t pidToken, uint32_t tidToken) = 0;
  virtual uint8_t kindOf(uint32_t catId) = 0;
};

// The slice table's columns (model/profile.ts SliceTable), written at [length, capacity).
struct SliceColumns {
  uint8_t* kind;
  uint32_t* track;
  double* start;
  double* dur;
  uint32_t* name;
  uint32_t* cat;
  double* correlation;
  double* externalId;
  int32_t* parent;
  int32_t* args;
  size_t length;
  size_t capacity;
};

struct FlowColumns {
  uint32_t* cat;
  uint32_t* id;
  uint8_t* phase;
  double* ts;
  uint32_t* track;
  int32_t* slice;
  size_t length;
  size_t capacity;
};

// ArgsArena: entry i is bytes[offsets[i], offsets[i + 1]).
struct ArgsColumns {
  uint8_t* bytes;
  size_t used;
  size_t byteCapacity;
  double* offsets;
  size_t count;
  size_t offsetCapacity;
};

// Ops that carry a "Call stack" or a "Call site" in their args, for CallStackTable (kNoteWidth values each).
constexpr size_t kNoteWidth = 7;
struct StackNotes {
  double* values;
  size_t length;
  size_t capacity;
};

// Metadata events (ph M), for the parser to apply once the events are in (kMetaWidth values each): name id,
// pid and tid tokens (-1: absent), and where the args object lies in the buffer (-1: none).
constexpr size_t kMetaWidth = 5;

struct ScanLimits {
  double maxEvents;
  double maxSlices;
  double maxValue;
};

// The parser state the scanner continues and hands back: where in the event array it is, the time origin (NaN
// until the first placed event) and the events read.
struct ScanState {
  bool afterElement;
  double originUs;
  double eventCount;
};

enum class Stop : int {
  End = 0,         // ran out of bytes between events
  Structure = 1,   // at something other than an event (']', or what the parser reports)
  HandBack = 2,    // at an event the TypeScript parser must read
  Incomplete = 3,  // at an event that runs past the bytes given
  Full = 4,        // at an event a column has no room for (fullMask says which)
};

enum FullMask : int { kSlicesFull = 1, kFlowsFull = 2, kArgsFull = 4, kNotesFull = 8, kMetaFull = 16 };

struct ScanResult {
  size_t pos;
  Stop stop;
  int fullMask;
  size_t argsBytesNeeded;
};

class KinetoScanner {
 public:
  KinetoScanner(uint8_t instantKind, uint8_t otherKind) : instantKind_(instantKind), otherKind_(otherKind) {}

  ScanResult scan(const uint8_t* buf, size_t pos, size_t end, ScanState& state, const ScanLimits& limits,
                  SliceColumns& slices, FlowColumns& flows, ArgsColumns& args, StackNotes& notes, StackNotes& meta,
                  ScanHost& host);

 private:
  uint32_t intern(const uint8_t* buf, size_t start, size_t end, ScanHost& host);
  uint32_t track(uint32_t pid, uint32_t tid, ScanHost& host);
  uint8_t kind(int64_t cat, ScanHost& host);

  uint8_t instantKind_;
  uint8_t otherKind_;
  // Intern cache: open addressing over entries; each entry's bytes live in arena_.
  struct Entry {
    uint64_t hash;
    size_t offset;
    size_t length;
    uint32_t id;
  };
  std::vector<int32_t> slots_ = std::vector<int32_t>(1 << 12, -1);
  std::vector<Entry> entries_;
  std::string arena_;
  std::unordered_map<uint64_t, uint32_t> tracks_;
  uint64_t lastTrackKey_ = ~uint64_t(0);
  uint32_t lastTrack_ = 0;
  std::vector<int16_t> kinds_;
};

}  // namespace flagprof::kineto
