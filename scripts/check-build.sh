#!/usr/bin/env bash
# Checks the Lambda builds: every bootstrap is a static arm64 ELF, every zip
# is under 16 MB (Lambda takes 50 MB; the cap catches bloat: the functions
# share one composition root, so each links the AWS SDK clients, the MCP SDK
# and OpenTelemetry), and building again gives byte-identical zips.
set -euo pipefail
cd "$(dirname "$0")/.."
fns=(api worker sweeper intake)
make -s build-lambdas >/dev/null
declare -A first
for fn in "${fns[@]}"; do
  bin="build/$fn/bootstrap"; zip="build/$fn.zip"
  info=$(file -b "$bin" 2>/dev/null || true)
  if [ -n "$info" ]; then
    case "$info" in
      *ELF*ARM\ aarch64*statically\ linked*) ;;
      *) echo "check-build: $bin is not a static arm64 ELF: $info" >&2; exit 1 ;;
    esac
  else
    # No file(1): read the ELF header (machine 0xB7 = aarch64) ourselves.
    machine=$(od -An -t x1 -j 18 -N 2 "$bin" | tr -d ' ')
    [ "$machine" = "b700" ] || { echo "check-build: $bin is not arm64 (e_machine $machine)" >&2; exit 1; }
  fi
  size=$(stat -c %s "$zip")
  [ "$size" -lt 16000000 ] || { echo "check-build: $zip is $size bytes (limit 16 MB)" >&2; exit 1; }
  first[$fn]=$(sha256sum "$zip" | cut -d' ' -f1)
  printf '%-8s %s  %8d bytes  %s\n' "$fn" "${first[$fn]:0:16}" "$size" "$info"
done
rm -rf build/api build/worker build/sweeper build/intake build/*.zip
make -s build-lambdas >/dev/null
for fn in "${fns[@]}"; do
  again=$(sha256sum "build/$fn.zip" | cut -d' ' -f1)
  [ "$again" = "${first[$fn]}" ] || { echo "check-build: build/$fn.zip differs between two builds" >&2; exit 1; }
done
echo "check-build: ok (static arm64, under 16 MB, reproducible)"
