// fpc_dump CAPTURE.fpc: the capture's DeviceEvents as JSON lines, for machines without Node (the GPU check
// decodes its real capture with it). Diagnostics go to stderr; exit 2 for a file that is not a capture.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "../capture_decoder.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fpc_dump CAPTURE.fpc\n");
    return 2;
  }
  int fd = ::open(argv[1], O_RDONLY);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || st.st_size == 0) {
    std::fprintf(stderr, "%s: cannot read the capture\n", argv[1]);
    return 2;
  }
  const size_t size = size_t(st.st_size);
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) return 2;
  const auto* data = static_cast<const uint8_t*>(p);
  flagprof::DecodedCapture c;
  std::string error;
  if (!flagprof::decodeCapture(data, size, c, error)) {
    std::fprintf(stderr, "%s: %s\n", argv[1], error.c_str());
    return 2;
  }
  for (const auto& d : c.diagnostics) std::fprintf(stderr, "%s %s: %s\n", d.severity.c_str(), d.code.c_str(), d.message.c_str());
  std::printf("{\"window\": [%llu, %llu], \"dropped\": %llu, \"closed\": %s}\n",
              (unsigned long long)c.windowStart.value_or(0), (unsigned long long)c.windowStop.value_or(0),
              (unsigned long long)c.counts.dropped, c.closed ? "true" : "false");
  std::string line;
  for (size_t i = 0; i < c.size(); ++i) {
    flagprof::DeviceEvent e = flagprof::eventAt(c, i, data);
    line = "{\"kind\": \"";
    line += flagprof::eventKindName(e.kind);
    line += "\", \"start\": " + std::to_string(e.start_ns) + ", \"end\": " + std::to_string(e.end_ns);
    line += ", \"correlation\": " + std::to_string(e.correlation_id);
    line += ", \"external\": " + (e.external_correlation_id ? std::to_string(*e.external_correlation_id) : std::string("null"));
    line += ", \"device\": " + std::to_string(e.device) + ", \"stream\": " + std::to_string(e.stream);
    line += ", \"thread\": " + std::to_string(e.thread_id) + ", \"name\": ";
    flagprof::appendJsonString(line, e.name.data(), e.name.size());
    line += ", \"metadata\": ";
    flagprof::appendMetadataJson(line, e.metadata);
    line += "}\n";
    std::fwrite(line.data(), 1, line.size(), stdout);
  }
  return 0;
}
