#!/usr/bin/env bash
# Checks the Lambda builds: every bootstrap is a static arm64 ELF, each zip
# is under its function's cap (Lambda takes 50 MB; the caps are what each
# function reaches, lowered as it shrinks: each links only the features it
# runs — app.Features — so the sweeper and the intake function link no
# model provider, MCP client or span exporter, and the API no provider or
# MCP client), and building again gives byte-identical zips.
set -euo pipefail
cd "$(dirname "$0")/.."
fns=(api worker sweeper intake)
# Caps in bytes, at what each function reaches (issue 27's targets: api,
# sweeper and intake 7 MB, worker 9 MB; docs/performance.md). The span
# exporter is OTLP/HTTP alone (no gRPC exporter: 340 KB of the API's and
# the worker's zips), and the grpcnotrace tag (LAMBDA_FLAGS) keeps the
# gRPC packages the OTLP protobuf types still import from linking
# golang.org/x/net/trace and with it html/template, which would keep
# every method of every AWS SDK client. scripts/mkzip deflates at the
# best level. The API's A2A edge (the official SDK's a2a and a2asrv
# packages) costs it 125 KB, and the functions that link the API
# package without serving it (app builds it) 30 KB of its globals and
# the remote calls' core and durable code 25 KB; the
# worker's A2A client (internal/a2atool: a2a and a2aclient, no gRPC)
# 72 KB of its zip, and the sweeper's (it cancels the remote tasks runs
# gave up on: internal/features/remote) 43 KB of its. The Bedrock runtime
# client (the Bedrock provider, and Bedrock Guardrails:
# internal/guardrails/bedrock) is the worker's alone: built by awsenv, it
# cost the API 195 KB and the sweeper and the intake function 191 KB and
# 195 KB of their zips. Agent versions (the version catalog, the
# routes, the stores' versions and aliases) cost each function about
# 20 KB, and the operator's run list (titles, filters, ETags) 40 KB.
# Forks, comparisons and evals (their routes, the eval store, the
# dataset checks and the scoring, which runs where a case run's end is
# delivered: the worker, the API and the sweeper) cost the API 75 KB,
# the sweeper 74 KB, the worker 37 KB and the intake function 25 KB.
# No function links the generated SSM, Secrets Manager, Lambda or
# EventBridge clients (awsenv.JSONClient calls the four operations Baton
# uses; docs/performance.md, Cold start): about 530 KB off each zip.
# Long-term memory (its routes and the store's memory items everywhere;
# the memory service, its embedders and Bedrock's InvokeModel in the
# worker alone: features.Memory) costs the API about 40 KB and the
# worker about 95 KB, the sweeper and the intake function about 20 KB.
# The EventBridge Scheduler client (the API's alone, which keeps each
# schedule's EventBridge schedule: internal/schedules/eventbridge, through
# app.Features) costs the API 16 KB (6,381,905 to 6,398,283 bytes); an
# old-style generated client (no schema tables), it initialises in 0.1 ms
# and 82 KB at a cold start (GODEBUG=inittrace=1).
# Scheduled runs (the schedule service, its routes, cronspec; the intake
# fires schedules) cost the worker about 14 KB and the sweeper less;
# the API (6,398,283 to 6,662,840 bytes) and the intake function
# (to 5,083,182) also carry time/tzdata, the zones Lambda's runtime lacks.
declare -A cap=([api]=6680000 [worker]=7090000 [sweeper]=4990000 [intake]=5100000)
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
  [ "$size" -le "${cap[$fn]}" ] || { echo "check-build: $zip is $size bytes (its cap is ${cap[$fn]})" >&2; exit 1; }
  first[$fn]=$(sha256sum "$zip" | cut -d' ' -f1)
  printf '%-8s %s  %8d bytes (cap %8d)  %s\n' "$fn" "${first[$fn]:0:16}" "$size" "${cap[$fn]}" "$info"
done
rm -rf build/api build/worker build/sweeper build/intake build/*.zip
make -s build-lambdas >/dev/null
for fn in "${fns[@]}"; do
  again=$(sha256sum "build/$fn.zip" | cut -d' ' -f1)
  [ "$again" = "${first[$fn]}" ] || { echo "check-build: build/$fn.zip differs between two builds" >&2; exit 1; }
done
echo "check-build: ok (static arm64, each zip under its cap, reproducible)"
