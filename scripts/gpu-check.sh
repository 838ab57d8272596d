#!/bin/bash
# GPU check for agent mode, run on a machine with an NVIDIA GPU, torch with CUDA and CUPTI (prepared for the
# H200 check: one run, a few minutes). Builds the agent with the machine's g++ (no Node needed), then profiles
# the parity workload (5x matmul+relu on 1024x1024, a sort of 16 elements, a device-to-host copy) twice:
#   kineto mode: torch.profiler with CPU+CUDA activities (torch's own CUPTI subscriber);
#   agent mode : libflagprof_agent.so bound to the real libcupti, torch.profiler with CPU only.
# Reports per mode the kernel/memcpy/memset/runtime counts, the share of device time attributed to the same op
# in both modes (target >= 99%), flow pairing, capture-window containment and the agent's overhead against
# kineto. Everything lands in $OUT (default out/gpu-check): report.json, both traces and the agent's capture.fpc
# (keep it as test/fixtures/captures/h200-parity.fpc: a real capture).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-out/gpu-check}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
INC=""
for d in "$CUDA_HOME/include" "$CUDA_HOME/extras/CUPTI/include"; do
  [ -f "$d/cupti_activity.h" ] && INC="$INC -I$d"
done
build="$OUT/build"
mkdir -p "$build"
# Every vendor folder's sources, as the main build lists them (scripts/vendor-sources.mjs, without node here).
keys=$(grep -o '^#define FLAGPROF_FOR_EACH_VENDOR(X).*' native/vendors/vendors.h | grep -o 'X([a-z0-9_]*)' | sed 's/^X(\(.*\))$/\1/')
sources() { for key in $keys; do if [ -f "native/vendors/$key/$1.cc" ]; then echo "native/vendors/$key/$1.cc"; fi; done; }
tracer="native/tracer/device_tracer.cc native/tracer/fpc_format.cc native/tracer/capture_decoder.cc $(sources decode)"
agent="native/agent/agent.cc $(sources binding)"
g++ -std=c++17 -O2 -fPIC -shared -fvisibility=hidden $INC $agent $tracer -ldl -lpthread -o "$build/libflagprof_agent.so"
g++ -std=c++17 -O2 $INC native/tracer/tools/fpc_dump.cc $tracer -o "$build/fpc_dump"
echo "gpu-check: built the agent ($([ -n "$INC" ] && echo "layout checked against the installed CUPTI headers" || echo "no CUPTI headers found"))"

# The real libcupti: the one torch ships, else the toolkit's.
if [ -z "${FLAGOS_TRACER_LIBRARY:-}" ]; then
  FLAGOS_TRACER_LIBRARY=$("$PY" - <<'PYEOF'
import glob, os, site
paths = []
for base in site.getsitepackages():
    paths += glob.glob(os.path.join(base, "nvidia", "cuda_cupti", "lib", "libcupti.so*"))
    paths += glob.glob(os.path.join(base, "nvidia", "*", "lib", "libcupti.so*"))
print(sorted(paths)[0] if paths else "")
PYEOF
)
  [ -z "$FLAGOS_TRACER_LIBRARY" ] && [ -e "$CUDA_HOME/lib64/libcupti.so" ] && FLAGOS_TRACER_LIBRARY="$CUDA_HOME/lib64/libcupti.so"
  [ -z "$FLAGOS_TRACER_LIBRARY" ] && [ -e "$CUDA_HOME/extras/CUPTI/lib64/libcupti.so" ] && FLAGOS_TRACER_LIBRARY="$CUDA_HOME/extras/CUPTI/lib64/libcupti.so"
fi
export FLAGOS_TRACER_LIBRARY FLAGPROF_AGENT_LIBRARY="$build/libflagprof_agent.so" FLAGOS_TRACE=1
echo "gpu-check: vendor library ${FLAGOS_TRACER_LIBRARY:-<default search>}"
PYTHONPATH="native/agent/python${PYTHONPATH:+:$PYTHONPATH}" "$PY" scripts/gpu_check.py "$OUT" "$build/fpc_dump"
