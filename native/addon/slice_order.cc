#include "slice_order.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace flagprof::kineto {

bool orderAndNest(const SliceOrderIn& in, const SliceOrderOut& out) {
  const size_t n = in.length;
  const size_t tracks = in.trackCount;
  std::fill(out.offsets, out.offsets + tracks + 1, 0u);
  for (size_t i = 0; i < n; i++) {
    if (in.track[i] >= tracks) return false;
    out.offsets[in.track[i] + 1]++;
  }
  for (size_t t = 0; t < tracks; t++) out.offsets[t + 1] += out.offsets[t];
  std::vector<uint32_t> fill(out.offsets, out.offsets + tracks);
  for (size_t i = 0; i < n; i++) out.order[fill[in.track[i]]++] = uint32_t(i);

  const double* start = in.start;
  const double* dur = in.dur;
  // finish.ts `before`: a total order (the index breaks ties), so any correct sort gives the reference's order.
  const auto before = [start, dur](uint32_t a, uint32_t b) {
    if (start[a] != start[b]) return start[a] < start[b];
    if (dur[a] != dur[b]) return dur[a] > dur[b];
    return a < b;
  };
  std::vector<uint32_t> stack;
  for (size_t t = 0; t < tracks; t++) {
    uint32_t* lo = out.order + out.offsets[t];
    uint32_t* hi = out.order + out.offsets[t + 1];
    // Traces are mostly written in order already: check before sorting.
    if (std::adjacent_find(lo, hi, [&](uint32_t a, uint32_t b) { return before(b, a); }) != hi)
      std::sort(lo, hi, before);
    stack.clear();
    uint32_t maxDepth = 0;
    for (uint32_t* k = lo; k < hi; k++) {
      const uint32_t i = *k;
      const double s = start[i];
      while (!stack.empty()) {
        const uint32_t open = stack.back();
        if (start[open] + dur[open] > s) break;
        // A zero-length parent at the same instant still encloses what starts there.
        if (dur[open] == 0 && start[open] == s && dur[i] == 0) break;
        stack.pop_back();
      }
      const uint32_t d = uint32_t(std::min<size_t>(stack.size(), 0xffff));
      out.depth[i] = uint16_t(d);
      out.parent[i] = stack.empty() ? -1 : int32_t(stack.back());
      maxDepth = std::max(maxDepth, d);
      stack.push_back(i);
    }
    out.maxDepth[t] = maxDepth;
  }
  return true;
}

double shiftToZero(double* start, size_t n, double* flowTs, size_t m) {
  double min = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < n; i++) min = start[i] < min ? start[i] : min;
  for (size_t i = 0; i < m; i++) min = flowTs[i] < min ? flowTs[i] : min;
  if (!std::isfinite(min)) return std::numeric_limits<double>::quiet_NaN();
  const double shift = std::floor(min);
  if (shift == 0) return 0;
  for (size_t i = 0; i < n; i++) start[i] -= shift;
  for (size_t i = 0; i < m; i++) flowTs[i] -= shift;
  return shift;
}

bool countByClass(const uint8_t* kind, const uint32_t* track, size_t n, const uint8_t* classOfKind, size_t kinds,
                  uint32_t* device, uint32_t* cpu, size_t trackCount) {
  std::fill(device, device + trackCount, 0u);
  std::fill(cpu, cpu + trackCount, 0u);
  for (size_t i = 0; i < n; i++) {
    if (track[i] >= trackCount || kind[i] >= kinds) return false;
    const uint8_t c = classOfKind[kind[i]];
    if (c == 1) device[track[i]]++;
    else if (c == 2) cpu[track[i]]++;
  }
  return true;
}

bool bindFlows(const FlowBindIn& in, int32_t* slice) {
  for (size_t f = 0; f < in.flowCount; f++) {
    if (in.flowTrack[f] >= in.trackCount) return false;
    const int32_t track = in.lookIn[in.flowTrack[f]];
    if (track < 0) continue;
    if (size_t(track) >= in.trackCount) return false;
    const double t = in.flowTs[f];
    // finish.ts enclosingSlice: the last slice starting at or before t, then out through its parents.
    const uint32_t* first = in.order + in.offsets[track];
    const uint32_t* last = in.order + in.offsets[track + 1];
    const uint32_t* at = std::upper_bound(first, last, t, [&](double v, uint32_t i) { return v < in.start[i]; });
    if (at == first) {
      slice[f] = -1;
      continue;
    }
    int32_t i = int32_t(*(at - 1));
    while (i >= 0 && in.start[i] + in.dur[i] < t) i = in.parent[i];
    slice[f] = i;
  }
  return true;
}

}  // namespace flagprof::kineto
