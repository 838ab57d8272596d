// The finishing pass over a profile's slices (extension/import/finish.ts sortByTrack and nest, which stay the
// reference and the fallback): per-track order by start (longer first at equal starts, then index), and each
// slice's depth and enclosing slice. Run once per import over every slice, where the TypeScript pass ran mostly
// before V8 had optimised it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace flagprof::kineto {

struct SliceOrderIn {
  const uint32_t* track;
  const double* start;
  const double* dur;
  size_t length;
  size_t trackCount;
};

struct SliceOrderOut {
  uint32_t* order;     // length entries: slice indices, track by track
  uint32_t* offsets;   // trackCount + 1: track t's slices are order[offsets[t], offsets[t + 1])
  uint16_t* depth;     // per slice, capped at 0xffff
  int32_t* parent;     // per slice: the enclosing slice on its track, -1 at the top
  uint32_t* maxDepth;  // per track
};

// False when a slice names a track past trackCount (nothing is then written that the caller may use).
bool orderAndNest(const SliceOrderIn& in, const SliceOrderOut& out);

// finish.ts rebase: moves t = 0 to the whole microsecond at or before the earliest start or flow time. Returns the
// shift subtracted (0: none; NaN: no times at all).
double shiftToZero(double* start, size_t n, double* flowTs, size_t m);

// finish.ts classifyTracks' counts: per track, its device slices and its CPU slices, by classOfKind[kind]
// (1: device, 2: CPU, else neither).
bool countByClass(const uint8_t* kind, const uint32_t* track, size_t n, const uint8_t* classOfKind, size_t kinds,
                  uint32_t* device, uint32_t* cpu, size_t trackCount);

// finish.ts bindFlows after orderAndNest: each flow half's innermost enclosing slice on lookIn[its track] (-1: leave
// it as it is), or -1 where none encloses it.
struct FlowBindIn {
  const uint32_t* flowTrack;
  const double* flowTs;
  size_t flowCount;
  const int32_t* lookIn;
  size_t trackCount;
  const uint32_t* order;
  const uint32_t* offsets;
  const double* start;
  const double* dur;
  const int32_t* parent;
};
bool bindFlows(const FlowBindIn& in, int32_t* slice);

}  // namespace flagprof::kineto
