package app

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/auth"
	"github.com/baton-agents/baton/internal/providers"
	"github.com/baton-agents/baton/internal/worker"
)

// Config is everything a Baton process is built from: the Lambdas read it
// from their environment (ConfigFromEnv); baton dev, baton invoke, the
// benchmark and the tests fill it in. Zero fields take the defaults
// Build applies (WithDefaults).
type Config struct {
	Stores Stores
	Agents Agents
	// Intake is the intake queue, whose messages start runs (intake.go).
	Intake Intake
	// Schedules are the schedule settings (schedules.go).
	Schedules Schedules
	// Region is the AWS region (AWS_REGION); empty uses the SDK's
	// resolution, then us-east-1. Bedrock defaults to it.
	Region string
	// Providers lists the model providers to enable (BATON_PROVIDERS:
	// scripted, openai, anthropic, bedrock). Their settings
	// (BATON_OPENAI_*, BATON_ANTHROPIC_*, BATON_BEDROCK_*,
	// BATON_MODEL_*) are read with Env.
	Providers []string
	// ExecuteTools builds the server tools' executors (resolving their
	// signing secrets and AWS clients at cold start). Only the worker and
	// baton dev execute tools; the API and the sweeper leave it false
	// and need no access to tool secrets.
	ExecuteTools bool
	// OTelConsole prints the OpenTelemetry spans to the log output
	// (baton dev --otel-console); otherwise OTEL_TRACES_EXPORTER chooses
	// the exporter (internal/telemetry), none by default.
	OTelConsole bool

	// CORSOrigins are the browser origins allowed to call the API
	// (BATON_CORS_ORIGINS, comma-separated; "*" allows any).
	CORSOrigins []string
	// JWT, when its issuer is set, accepts JWTs of that OIDC issuer
	// beside Baton's tokens (BATON_JWT_*; docs/auth.md).
	JWT auth.JWTConfig
	// IAMPrincipals, a JSON object of IAM principal ARNs to tenants and
	// scopes (BATON_IAM_PRINCIPALS; auth.ParseIAMPrincipals), serves the
	// routes under /iam/ to the callers API Gateway authorized with
	// AWS_IAM (docs/auth.md).
	IAMPrincipals string
	// Limits are the per-tenant limits (BATON_TENANT_RATE and friends;
	// docs/limits.md); zero: none.
	Limits      Limits
	MaxBody     int           // BATON_MAX_BODY_BYTES (default 5 MiB)
	StallAfter  time.Duration // BATON_STALL_AFTER (default 2m)
	IntentLease time.Duration // BATON_INTENT_LEASE (default 5m)
	MaxReceives int           // BATON_MAX_RECEIVES (default 5; match the queue's redrive policy)
	// StepVisibility is the step queue's visibility timeout, when the
	// process does not create the queue itself (BATON_STEP_VISIBILITY;
	// the stack sets it): the worker keeps the messages of the batch it
	// handles hidden for that long. A queue the process creates (the
	// embedded one, --create-resources) has Stores.Visibility.
	StepVisibility time.Duration
	// Chain sets chained steps: the worker continues a run's next step in
	// the invocation that committed the step before it instead of sending
	// it through the queue (docs/runtime.md).
	Chain    Chain
	LogLevel string // LOG_LEVEL (default info)
	// LogText selects a text log handler (baton dev) instead of JSON
	// (the Lambdas); Deps.Log replaces both.
	LogText bool

	// StreamTransfer is how API Gateway invokes the API Lambda for GET
	// /v1/runs/{run_id}/stream (BATON_STREAM_TRANSFER): StreamTransferStream
	// (the default: a STREAM integration, answered as a response stream) or
	// StreamTransferBuffered (the ordinary integration, answered with 25 s
	// buffered windows). It must match the deployed integration.
	StreamTransfer string
	// Notify says where run notifications go (notify.go).
	Notify Notify
	// Tokens are stored at Build; only on the embedded stores
	// (BATON_DEV_TOKENS with BATON_STORES=memory).
	Tokens []Token

	// Env reads the provider settings and the tools' secret_env
	// variables; nil means the process environment.
	Env func(string) (string, bool)
}

// The API Lambda's stream transfer modes (Config.StreamTransfer), named
// after API Gateway's responseTransferMode.
const (
	StreamTransferStream   = "STREAM"
	StreamTransferBuffered = "BUFFERED"
)

// Stores says what the process runs on: the embedded in-memory stores,
// or a DynamoDB table and an SQS FIFO step queue.
type Stores struct {
	// Memory selects the embedded in-memory store and queue (baton dev's
	// default, the tests); the other fields but Visibility are then
	// unused.
	Memory bool
	// DynamoDBEndpoint and SQSEndpoint point the clients at emulators
	// (DynamoDB Local, fauxqs, LocalStack); empty uses AWS.
	DynamoDBEndpoint string
	SQSEndpoint      string
	Table            string // BATON_TABLE
	// QueueURL is the step queue (BATON_QUEUE_URL); without it the queue
	// is found, or created, by QueueName.
	QueueURL  string
	QueueName string // base name, ".fifo" is added
	// CreateResources creates the table and the queues when missing.
	CreateResources bool
	// Visibility is the step visibility timeout of the embedded queue and
	// of created queues (default 20s): an interrupted step is retried
	// after it.
	Visibility time.Duration
	// OneProcess says this process is every writer of the runs (baton dev
	// on DynamoDB and SQS): a live stream then wakes on this process's
	// writes (durable.Changes) instead of polling the table, as it always
	// does on the embedded stores.
	OneProcess bool
}

// Chain is the worker's chaining of steps (worker.ChainLimits).
type Chain struct {
	// Off turns chaining off (BATON_CHAIN_STEPS=0): every step goes
	// through the queue.
	Off bool
	// Steps is the most steps an invocation continues after its
	// message's own (BATON_CHAIN_STEPS, default 32).
	Steps int
	// MinRemaining is the invocation time left a step needs to be
	// chained (BATON_CHAIN_MIN_REMAINING, default 60s).
	MinRemaining time.Duration
	// Lease is how long a chained step is its invocation's before the
	// sweeper sends it (BATON_CHAIN_LEASE; default the step visibility
	// timeout when known, else 30s).
	Lease time.Duration
}

// Default chaining limits.
const (
	DefaultChainSteps        = 32
	DefaultChainMinRemaining = time.Minute
	DefaultChainLease        = 30 * time.Second
)

// Agents says where the agent registry comes from: Bytes, JSON or File,
// the first one set.
type Agents struct {
	File  string // BATON_AGENTS_FILE (default agents.json beside the binary)
	JSON  string // BATON_AGENTS_JSON (inline, wins over the file)
	Bytes []byte // an embedded registry (baton dev's demo agent)
}

// Defaults.
const (
	DefaultMaxBody    = 5 << 20
	DefaultVisibility = 20 * time.Second
	DefaultQueueName  = "baton-steps"
	DefaultTable      = "baton"
)

// ConfigFromEnv reads the Lambdas' configuration with lookup
// (os.LookupEnv in production): the DynamoDB table and SQS queue of the
// deployment, and the settings above. BATON_STORES=memory runs a function
// binary on the embedded stores instead, with the tokens of
// BATON_DEV_TOKENS=tenant=token,… — for running the binary locally against
// a Runtime API emulator or a test's fake; never in a deployment, where
// each execution environment would hold its own state.
func ConfigFromEnv(lookup func(string) (string, bool)) (Config, error) {
	get := func(k, def string) string {
		if v, ok := lookup(k); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
		return def
	}
	c := Config{
		Stores: Stores{Table: get("BATON_TABLE", ""), QueueURL: get("BATON_QUEUE_URL", "")},
		Agents: Agents{File: get("BATON_AGENTS_FILE", "agents.json"), JSON: get("BATON_AGENTS_JSON", "")},
		Region: get("AWS_REGION", ""), LogLevel: get("LOG_LEVEL", "info"), Providers: List(get("BATON_PROVIDERS", "")),
		StreamTransfer: strings.ToUpper(get("BATON_STREAM_TRANSFER", StreamTransferStream)),
		Env:            lookup,
		Intake:         intakeFromEnv(get),
		CORSOrigins:    List(get("BATON_CORS_ORIGINS", "")),
		IAMPrincipals:  get("BATON_IAM_PRINCIPALS", ""),
	}
	var err error
	if c.JWT, err = JWTFromEnv(get); err != nil {
		return c, err
	}
	if c.Limits, err = LimitsFromEnv(get); err != nil {
		return c, err
	}
	if c.Schedules, err = SchedulesFromEnv(get); err != nil {
		return c, err
	}
	switch s := get("BATON_STORES", "aws"); s {
	case "aws":
		c.Notify.EventBus = get("BATON_EVENT_BUS", "default")
	case "memory":
		c.Stores.Memory = true
		if c.Tokens, err = ParseDevTokens(get("BATON_DEV_TOKENS", "")); err != nil {
			return c, err
		}
	default:
		return c, fmt.Errorf("BATON_STORES: want aws or memory, got %q", s)
	}
	if c.MaxBody, err = intEnv(get("BATON_MAX_BODY_BYTES", strconv.Itoa(DefaultMaxBody))); err != nil {
		return c, fmt.Errorf("BATON_MAX_BODY_BYTES: %w", err)
	}
	if c.MaxReceives, err = intEnv(get("BATON_MAX_RECEIVES", "5")); err != nil {
		return c, fmt.Errorf("BATON_MAX_RECEIVES: %w", err)
	}
	if c.StallAfter, err = time.ParseDuration(get("BATON_STALL_AFTER", "2m")); err != nil {
		return c, fmt.Errorf("BATON_STALL_AFTER: %w", err)
	}
	if c.IntentLease, err = time.ParseDuration(get("BATON_INTENT_LEASE", "5m")); err != nil {
		return c, fmt.Errorf("BATON_INTENT_LEASE: %w", err)
	}
	if v := get("BATON_CHAIN_STEPS", ""); v == "0" {
		c.Chain.Off = true
	} else if v != "" {
		if c.Chain.Steps, err = intEnv(v); err != nil {
			return c, fmt.Errorf("BATON_CHAIN_STEPS: %w (0 turns chaining off)", err)
		}
	}
	for _, d := range []struct {
		name string
		to   *time.Duration
	}{{"BATON_CHAIN_MIN_REMAINING", &c.Chain.MinRemaining}, {"BATON_CHAIN_LEASE", &c.Chain.Lease}} {
		if v := get(d.name, ""); v != "" {
			if *d.to, err = time.ParseDuration(v); err != nil || *d.to < time.Second {
				return c, fmt.Errorf("%s: want a duration of 1s or more, got %q", d.name, v)
			}
		}
	}
	if v := get("BATON_STEP_VISIBILITY", ""); v != "" {
		if c.StepVisibility, err = time.ParseDuration(v); err != nil || c.StepVisibility < time.Second {
			return c, fmt.Errorf("BATON_STEP_VISIBILITY: want a duration of 1s or more, got %q", v)
		}
	}
	return c, nil
}

// stepVisibility is the step queue's visibility timeout when it is
// known: the one the process gave the queue it created, or
// StepVisibility; 0 when unknown.
func (c Config) stepVisibility() time.Duration {
	if c.StepVisibility > 0 {
		return c.StepVisibility
	}
	if c.Stores.Memory || c.Stores.CreateResources {
		return c.Stores.Visibility
	}
	return 0
}

// chainLimits are the worker's chaining limits, with their defaults.
func (c Config) chainLimits() worker.ChainLimits {
	if c.Chain.Off {
		return worker.ChainLimits{}
	}
	l := worker.ChainLimits{Steps: c.Chain.Steps, MinRemaining: c.Chain.MinRemaining}
	if l.Steps == 0 {
		l.Steps = DefaultChainSteps
	}
	if l.MinRemaining == 0 {
		l.MinRemaining = DefaultChainMinRemaining
	}
	return l
}

// chainLease is how long a step a chaining worker holds is its invocation's
// (durable.Limits.ChainLease): Chain.Lease, else the step visibility
// timeout when known, else DefaultChainLease. Every function computes it,
// from the same settings: each commit of a held run sets its due time.
func (c Config) chainLease() time.Duration {
	switch {
	case c.Chain.Lease > 0:
		return c.Chain.Lease
	case c.stepVisibility() > 0:
		return c.stepVisibility()
	}
	return DefaultChainLease
}

// ParseDevTokens reads tenant=token,… (BATON_DEV_TOKENS): tokens of 8 or
// more characters with all scopes.
func ParseDevTokens(s string) ([]Token, error) {
	var out []Token
	for _, part := range List(s) {
		tenant, token, ok := strings.Cut(part, "=")
		tenant, token = strings.TrimSpace(tenant), strings.TrimSpace(token)
		if !ok || tenant == "" || len(token) < 8 {
			return nil, fmt.Errorf("BATON_DEV_TOKENS: want tenant=token pairs (tokens of 8 or more characters), got %q", part)
		}
		out = append(out, Token{Token: token, Tenant: tenant})
	}
	return out, nil
}

// Limits are the per-tenant limits of a deployment. A zero Rate or
// MaxActiveRuns is no limit.
type Limits struct {
	// TenantRate is each tenant's token bucket of API requests
	// (BATON_TENANT_RATE, requests a second, and BATON_TENANT_BURST).
	TenantRate core.RateLimit
	// CallerRate is each caller's bucket (BATON_CALLER_RATE and
	// BATON_CALLER_BURST): a token, or a JWT subject.
	CallerRate core.RateLimit
	// MaxActiveRuns caps each tenant's unfinished runs
	// (BATON_TENANT_MAX_ACTIVE).
	MaxActiveRuns int
}

// LimitsFromEnv reads the per-tenant limits.
func LimitsFromEnv(get func(k, def string) string) (Limits, error) {
	return LimitsFrom(func(k string) string { return get(k, "") }, func(k string) string { return k })
}

// LimitsFrom reads the per-tenant limits: value gives each setting by its
// environment variable's name, name what its errors call it (the
// variable, or baton dev's flag).
func LimitsFrom(value, name func(env string) string) (Limits, error) {
	var l Limits
	var err error
	if l.TenantRate, err = RateFrom(name("BATON_TENANT_RATE"), value("BATON_TENANT_RATE"), name("BATON_TENANT_BURST"), value("BATON_TENANT_BURST")); err != nil {
		return l, err
	}
	if l.CallerRate, err = RateFrom(name("BATON_CALLER_RATE"), value("BATON_CALLER_RATE"), name("BATON_CALLER_BURST"), value("BATON_CALLER_BURST")); err != nil {
		return l, err
	}
	if v := value("BATON_TENANT_MAX_ACTIVE"); v != "" {
		if l.MaxActiveRuns, err = strconv.Atoi(v); err != nil || l.MaxActiveRuns < 0 {
			return l, fmt.Errorf("%s: want a whole number of runs, 0 for no limit, got %q", name("BATON_TENANT_MAX_ACTIVE"), v)
		}
	}
	return l, nil
}

// RateFrom reads a token bucket: a rate of requests a second ("5", "5/s",
// "300/m", "0.5"; empty or 0: no limit) and a burst (a whole number;
// empty: the rate rounded up, at least 1). rateName and burstName name
// the settings in errors.
func RateFrom(rateName, rate, burstName, burst string) (core.RateLimit, error) {
	var l core.RateLimit
	if rate != "" {
		num, unit, _ := strings.Cut(rate, "/")
		per := map[string]float64{"": 1, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600}[unit]
		r, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || per == 0 || r < 0 || math.IsInf(r, 0) || math.IsNaN(r) {
			return l, fmt.Errorf("%s: want requests a second (5, 5/s, 300/m), got %q", rateName, rate)
		}
		l.Rate = r / per
	}
	if burst != "" {
		n, err := strconv.Atoi(burst)
		if err != nil || n < 1 {
			return l, fmt.Errorf("%s: want a whole number of requests, 1 or more, got %q", burstName, burst)
		}
		l.Burst = n
	}
	if l.Rate > 0 && l.Burst == 0 {
		l.Burst = max(1, int(math.Ceil(l.Rate)))
	}
	return l, nil
}

// List splits a comma-separated list, dropping empty items.
func List(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// JWTFromEnv reads the JWT settings: BATON_JWT_ISSUER,
// BATON_JWT_AUDIENCE, BATON_JWT_JWKS_URL or BATON_JWT_JWKS_FILE,
// BATON_JWT_TENANT_CLAIM, BATON_JWT_SCOPE_CLAIM and BATON_JWT_SCOPE_MAP.
func JWTFromEnv(get func(k, def string) string) (auth.JWTConfig, error) {
	c := auth.JWTConfig{Issuer: get("BATON_JWT_ISSUER", ""), Audience: get("BATON_JWT_AUDIENCE", ""),
		JWKSURL: get("BATON_JWT_JWKS_URL", ""), JWKSFile: get("BATON_JWT_JWKS_FILE", ""),
		TenantClaim: get("BATON_JWT_TENANT_CLAIM", ""), ScopeClaim: get("BATON_JWT_SCOPE_CLAIM", "")}
	m, err := ParseScopeMap(get("BATON_JWT_SCOPE_MAP", ""))
	if err != nil {
		return c, fmt.Errorf("BATON_JWT_SCOPE_MAP: %w", err)
	}
	c.ScopeMap = m
	if c.Issuer == "" && (c.Audience != "" || c.JWKSURL != "" || c.JWKSFile != "") {
		return c, fmt.Errorf("BATON_JWT_ISSUER is required with the other BATON_JWT_ settings")
	}
	return c, nil
}

// ParseScopeMap reads an issuer-scope-to-Baton-scopes map:
// "from=to+to,from=to" (baton/user=runs:read+runs:write).
func ParseScopeMap(s string) (map[string][]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string][]string{}
	for _, part := range List(s) {
		from, to, ok := strings.Cut(part, "=")
		from = strings.TrimSpace(from)
		if !ok || from == "" || strings.TrimSpace(to) == "" {
			return nil, fmt.Errorf("want from=scope+scope pairs separated by commas, got %q", part)
		}
		for _, sc := range strings.Split(to, "+") {
			out[from] = append(out[from], strings.TrimSpace(sc))
		}
	}
	return out, nil
}

func intEnv(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("want a positive integer, got %q", s)
	}
	return n, nil
}

// WithDefaults fills in the zero tunables.
func (c Config) WithDefaults() Config {
	if c.MaxBody == 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.StallAfter == 0 {
		c.StallAfter = 2 * time.Minute
	}
	if c.IntentLease == 0 {
		c.IntentLease = 5 * time.Minute
	}
	if c.MaxReceives == 0 {
		c.MaxReceives = 5
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	if c.Stores.Visibility == 0 {
		c.Stores.Visibility = DefaultVisibility
	}
	if c.Env == nil {
		c.Env = os.LookupEnv
	}
	if c.StreamTransfer == "" {
		c.StreamTransfer = StreamTransferStream
	}
	return c
}

// Validate checks required settings.
func (c Config) Validate() error {
	if !c.Stores.Memory {
		if c.Stores.Table == "" {
			return fmt.Errorf("BATON_TABLE is required")
		}
		if c.Stores.QueueURL == "" && c.Stores.QueueName == "" {
			return fmt.Errorf("BATON_QUEUE_URL is required")
		}
	}
	if c.MaxBody > 6_000_000 {
		return fmt.Errorf("BATON_MAX_BODY_BYTES must stay under Lambda's 6 MB payload limit")
	}
	if c.StallAfter <= 0 || c.IntentLease <= 0 {
		return fmt.Errorf("BATON_STALL_AFTER and BATON_INTENT_LEASE must be positive")
	}
	if c.Stores.Visibility < time.Second && (c.Stores.Memory || c.Stores.CreateResources) {
		return fmt.Errorf("the visibility timeout must be at least 1s")
	}
	if c.StreamTransfer != "" && c.StreamTransfer != StreamTransferStream && c.StreamTransfer != StreamTransferBuffered {
		return fmt.Errorf("BATON_STREAM_TRANSFER: want %s or %s, got %q", StreamTransferStream, StreamTransferBuffered, c.StreamTransfer)
	}
	if len(c.Tokens) > 0 && !c.Stores.Memory {
		return fmt.Errorf("tokens from the configuration are stored only in the embedded stores (BATON_STORES=memory); use baton token put for a table")
	}
	return nil
}

// ValidateAgentsFile checks the agents file at path (agents.ValidateIn:
// its JSON Schema, the loader's checks and what this build provides —
// Baton's providers, the built-in Go handlers and goHandlers —, never
// secrets or servers) and writes "path: ok (N agents: …)" to out, or
// each problem on a line of its own as path:line:column: …; valid is
// false when there are problems, err is set when the file cannot be
// read.
func ValidateAgentsFile(path string, goHandlers []string, out io.Writer) (valid bool, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	extra := map[string]ToolHandler{}
	for _, h := range goHandlers {
		extra[h] = nil
	}
	slugs, problems := agents.ValidateIn(b, agents.Environment{Providers: providers.Known, GoHandlers: GoHandlers(extra)})
	if len(problems) == 0 {
		fmt.Fprintf(out, "%s: ok (%s: %s)\n", path, plural(len(slugs), "agent"), strings.Join(slugs, ", "))
		return true, nil
	}
	for _, p := range problems {
		fmt.Fprintln(out, agents.At(path, p))
	}
	return false, nil
}

// plural is "1 agent", "2 agents".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
