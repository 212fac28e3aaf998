#!/usr/bin/env bash
# Makes sure the services the test suite starts itself are installed: Debian's redis-server and
# postgresql (the store's contract tests run against a real Redis and a real PostgreSQL on free
# loopback ports), ripgrep (search_files has a ripgrep path and a JS fallback; both are tested) and
# bubblewrap (run_command's sandbox; its tests run commands in the real sandbox).
# Installs them with apt-get when running as root; otherwise says how. The suite needs Linux
# (bubblewrap's namespaces).
set -euo pipefail
if [ "$(uname -s)" != "Linux" ]; then
  echo "The test suite needs Linux (run_command's tests use bubblewrap's namespaces): run it on Linux, or in a Linux container or VM." >&2
  exit 1
fi
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
# Debian keeps initdb out of PATH, under /usr/lib/postgresql/<version>/bin.
command -v initdb >/dev/null 2>&1 || compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing test services: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq "${missing[@]}" >/dev/null
elif command -v apt-get >/dev/null 2>&1; then
  echo "The tests need: ${missing[*]}. Install them, e.g.: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
else
  echo "The tests need: ${missing[*]} (Debian's package names). Install them with this system's package manager." >&2
  exit 1
fi
