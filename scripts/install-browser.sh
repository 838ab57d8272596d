#!/usr/bin/env bash
# Installs what the timeline's browser tests and the UI benchmark need: Debian chromium (driven headless by
# playwright-core, which downloads no browser of its own) and fonts. Idempotent: does nothing when present.
set -euo pipefail
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
dpkg -s fonts-liberation >/dev/null 2>&1 || missing+=(fonts-liberation)
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-browser: chromium and fonts already installed"
  exit 0
fi
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
echo "install-browser: apt-get install ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
/usr/bin/chromium --version
