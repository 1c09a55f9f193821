#!/usr/bin/env bash
# Installs what the end-to-end test needs, skipping whatever is already there:
# Debian packages (Chromium, headers for code-server's native modules, ripgrep) and
# code-server from the npm registry into a cache folder that survives fresh checkouts.
# Prints the code-server executable's path as its last line.
set -euo pipefail

CODE_SERVER_VERSION="4.99.4"
TOOLS_DIR="${CODEDRAFT_E2E_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/codedraft-e2e}/code-server-$CODE_SERVER_VERSION"
CODE_SERVER_BIN="$TOOLS_DIR/node_modules/.bin/code-server"
APT_PACKAGES=(libkrb5-dev libsecret-1-dev libx11-dev libxkbfile-dev ripgrep chromium)

log() { echo "[e2e install] $*" >&2; }

install_apt_packages() {
  local missing=()
  for package in "${APT_PACKAGES[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    return
  fi
  log "installing Debian packages: ${missing[*]}"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
}

# @vscode/ripgrep (a dependency of code-server) downloads rg from GitHub at install time, which
# this machine cannot reach. It first looks for the archive in $TMPDIR/vscode-ripgrep-cache-<version>,
# so Debian's rg is put there under every name the 1.15.x releases ask for.
seed_ripgrep_cache() {
  local tmp="${TMPDIR:-/tmp}"
  local staging
  staging="$(mktemp -d)"
  cp /usr/bin/rg "$staging/rg"
  tar -czf "$staging/rg.tar.gz" -C "$staging" rg
  local package_version build
  for package_version in 1.15.0 1.15.2 1.15.3 1.15.5 1.15.6 1.15.9 1.15.10 1.15.11 1.15.13 1.15.14; do
    mkdir -p "$tmp/vscode-ripgrep-cache-$package_version"
    for build in 4 5 6 7 8 9 10 11 12 13; do
      cp "$staging/rg.tar.gz" \
        "$tmp/vscode-ripgrep-cache-$package_version/ripgrep-v13.0.0-$build-x86_64-unknown-linux-musl.tar.gz"
    done
  done
  rm -rf "$staging"
}

install_code_server() {
  # --config keeps code-server from writing a default config into the user's home.
  if [ -x "$CODE_SERVER_BIN" ] && "$CODE_SERVER_BIN" --config "$TOOLS_DIR/config.yaml" --version >/dev/null 2>&1; then
    return
  fi
  log "installing code-server $CODE_SERVER_VERSION into $TOOLS_DIR (minutes the first time)"
  seed_ripgrep_cache
  mkdir -p "$TOOLS_DIR"
  (
    cd "$TOOLS_DIR"
    [ -f package.json ] || echo '{"name": "codedraft-e2e-tools", "private": true}' > package.json
    npm_config_yes=true npm install --unsafe-perm --no-audit --no-fund --loglevel=error \
      "code-server@$CODE_SERVER_VERSION" >&2
  )
  "$CODE_SERVER_BIN" --config "$TOOLS_DIR/config.yaml" --version >&2
}

install_apt_packages
install_code_server
echo "$CODE_SERVER_BIN"
