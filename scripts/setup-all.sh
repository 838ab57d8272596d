#!/usr/bin/env bash
# Everything the tests need on a fresh machine of this kind, idempotent (seconds when already installed):
# node modules (npm ci also builds the native addon), the Python venv with torch 2.13 CPU, Debian chromium,
# clang for the decoder fuzz test, and the real VS Code (code-server) harness for the end-to-end suite.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
npm ci --no-audit --no-fund
bash scripts/setup-python.sh
for script in install-browser.sh install-native-tools.sh install-e2e.sh; do
  if [ -f "scripts/$script" ]; then bash "scripts/$script"; fi
done
