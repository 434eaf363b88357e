# Baton — make targets. Run `make help` for the list.
SHELL := /usr/bin/env bash
GO ?= go
PKGS := ./...

.PHONY: help test test-unit emulators emulators-stop lint build run demo bench fuzz fmt golden clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

test: lint ## lint, unit tests, then contract and end-to-end tests on DynamoDB Local + fauxqs
	$(GO) test -count=1 $(PKGS)
	scripts/emulators.sh run $(GO) test -count=1 -tags 'integration e2e' ./internal/dynamostore/ ./internal/sqsqueue/ ./tests/

test-unit: lint ## lint and the tests that need no emulator
	$(GO) test -count=1 $(PKGS)

emulators: ## start DynamoDB Local and fauxqs on 127.0.0.1 (stop with make emulators-stop)
	scripts/emulators.sh start

emulators-stop: ## stop the emulators started by make emulators
	scripts/emulators.sh stop

lint: ## gofmt, go vet, and the check that core imports no AWS or provider SDK
	@scripts/lint.sh

build: ## compile every package and the baton CLI into build/
	$(GO) build $(PKGS)
	$(GO) build -trimpath -o build/baton ./cmd/baton

run: ## run Baton: baton dev on embedded stores with the bundled demo agent, on 127.0.0.1:8080
	$(GO) run ./cmd/baton dev

demo: ## run a scripted agent in process and print its result envelope
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
