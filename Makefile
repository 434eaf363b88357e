# Baton — make targets. Run `make help` for the list.
SHELL := /usr/bin/env bash
GO ?= go
PKGS := ./...

.PHONY: help test lint build run bench fuzz fmt golden clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

test: lint ## lint, then run every unit and contract test
	$(GO) test -count=1 $(PKGS)

lint: ## gofmt, go vet, and the check that core imports no AWS or provider SDK
	@scripts/lint.sh

build: ## compile every package and the baton CLI into build/
	$(GO) build $(PKGS)
	$(GO) build -trimpath -o build/baton ./cmd/baton

run: ## run Baton: the in-process scripted demo agent
	$(GO) run ./cmd/baton demo

bench: ## benchmarks (never part of make test)
	$(GO) test -run '^$$' -bench . -benchtime 200x ./core/...

FUZZTIME ?= 30s
fuzz: ## explore the fuzz targets (message, declaration and trimming normalization)
	for f in FuzzNormalizeMessages FuzzNormalizeToolDeclaration FuzzTrimToContextWindow; do \
		$(GO) test ./core -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) || exit 1; done

golden: ## rewrite the golden result envelopes after an intended change
	$(GO) test ./core/... -run TestScenarios -update

fmt: ## format the code
	gofmt -w $$(git ls-files '*.go')

clean: ## remove build output
	rm -rf build
