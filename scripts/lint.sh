#!/usr/bin/env bash
# Lint: formatting, go vet, no dead code, and the purity rule of core/ (DESIGN.md §3.2):
# core may import only the standard library and a few vetted pure-Go
# libraries, never the AWS SDK, the Lambda runtime or a model provider SDK.
set -euo pipefail
cd "$(dirname "$0")/.."

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './infra/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" >&2
  echo "$unformatted" >&2
  exit 1
fi

go vet ./...

allowed='^(github.com/baton-agents/baton/core|github.com/santhosh-tekuri/jsonschema/v6|golang.org/x/text)(/|$)'
deps=$(go list -deps -f '{{if not .Standard}}{{.ImportPath}}{{end}}' ./core/... | grep -vE "$allowed" || true)
if [ -n "$deps" ]; then
  echo "core/ imports packages outside its allow-list (standard library, jsonschema, x/text):" >&2
  echo "$deps" >&2
  exit 1
fi
forbidden=$(go list -deps ./core/... | grep -E 'aws-sdk-go|aws-lambda-go|anthropic|openai|bedrock' || true)
if [ -n "$forbidden" ]; then
  echo "core/ depends on an SDK it must not import: $forbidden" >&2
  exit 1
fi
# No unreachable function (golang.org/x/tools deadcode, pinned), tests
# counted as callers.
dead=$(go run golang.org/x/tools/cmd/deadcode@v0.39.0 -test ./...)
if [ -n "$dead" ]; then
  echo "unreachable functions (delete them, or test what stays public):" >&2
  echo "$dead" >&2
  exit 1
fi
echo "lint: ok"
