#!/bin/sh
# Native build and test tools: a C/C++ compiler for the addon, agent and fake CUPTI library (node-gyp), and clang
# with libFuzzer + ASan/UBSan runtimes for the decoder's fuzz test. Idempotent; Debian/Ubuntu apt.
set -eu
need=""
command -v g++ >/dev/null 2>&1 || need="$need g++"
command -v make >/dev/null 2>&1 || need="$need make"
command -v python3 >/dev/null 2>&1 || need="$need python3"
if ! command -v clang++ >/dev/null 2>&1; then need="$need clang"; fi
# libFuzzer and the sanitizer runtimes live in libclang-rt-<major>-dev on current Debian releases.
if command -v clang++ >/dev/null 2>&1 || [ -n "$need" ]; then
  probe=$(mktemp -d)
  printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long){return 0;}\n' > "$probe/f.cc"
  if ! clang++ -fsanitize=fuzzer,address,undefined "$probe/f.cc" -o "$probe/f" >/dev/null 2>&1; then
    major=$(apt-cache policy clang 2>/dev/null | sed -n 's/^  Candidate: 1:\([0-9]*\).*/\1/p')
    [ -n "$major" ] && need="$need libclang-rt-$major-dev"
  fi
  rm -rf "$probe"
fi
if [ -n "$need" ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need
fi
clang++ --version | head -n 1
