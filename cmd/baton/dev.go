package main

import (
	"cmp"
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/features"
)

//go:embed agents.demo.json
var demoAgents []byte

type devOptions struct {
	cfg     app.Config
	addr    string
	pollers int
	// intakeDir feeds the intake queue from a folder (--intake-dir).
	intakeDir string
	// iamKeys stand in for IAM under /iam/ (--iam-key).
	iamKeys []app.IAMKey
	// clock is the controllable clock of --clock-offset (nil: the wall
	// clock).
	clock *app.DevClock
}

func parseDevFlags(args []string, stderr io.Writer) (devOptions, error) {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := devOptions{}
	s := &o.cfg.Stores
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to serve the API on")
	fs.StringVar(&o.cfg.Agents.File, "agents", "", "agents file (default: the bundled demo agent)")
	fs.StringVar(&s.DynamoDBEndpoint, "dynamodb-endpoint", firstEnv("AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL"), "DynamoDB endpoint (DynamoDB Local, LocalStack, AWS); empty: embedded store")
	fs.StringVar(&s.SQSEndpoint, "sqs-endpoint", firstEnv("AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL"), "SQS endpoint (fauxqs, LocalStack, AWS); empty: embedded queue")
	fs.StringVar(&o.cfg.Region, "region", firstEnv("AWS_REGION", "AWS_DEFAULT_REGION"), "AWS region for external stores (default us-east-1)")
	fs.StringVar(&s.Table, "table", app.DefaultTable, "DynamoDB table name")
	fs.StringVar(&s.QueueName, "queue", app.DefaultQueueName, "SQS FIFO queue base name (.fifo is added)")
	fs.StringVar(&o.cfg.Intake.QueueName, "intake-queue", app.DefaultIntakeQueueName, "SQS standard intake queue name (its dead-letter queue is NAME-dlq); on the embedded stores the intake queue is in memory")
	fs.StringVar(&o.intakeDir, "intake-dir", "", "feed the intake queue from a folder: each *.json file dropped there is sent as one message and moved to DIR/sent/ (on the embedded stores dead letters are written to DIR/dead/)")
	fs.BoolVar(&s.CreateResources, "create-resources", false, "create the table and queues when missing")
	fs.BoolVar(&o.cfg.OTelConsole, "otel-console", false, "print OpenTelemetry spans (one JSON object each) to stderr; otherwise the OTEL_* variables choose the exporter (none by default)")
	fs.DurationVar(&s.Visibility, "visibility-timeout", app.DefaultVisibility, "step visibility timeout: an interrupted step is retried after it")
	fs.IntVar(&o.pollers, "pollers", 4, "concurrent queue pollers")
	fs.StringVar(&o.cfg.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&o.cfg.Notify.URL, "notify-url", "", "POST each run notification, as the EventBridge entry it would be ({\"source\",\"detail-type\",\"detail\"}), to this URL; empty: log them")
	cors := fs.String("cors-origins", os.Getenv("BATON_CORS_ORIGINS"), "comma-separated browser origins (e.g. http://localhost:5173, or *) allowed to call the API from a browser")
	j := &o.cfg.JWT
	fs.StringVar(&j.Issuer, "jwt-issuer", os.Getenv("BATON_JWT_ISSUER"), "accept JWTs of this OIDC issuer (its exact iss) beside the tokens of BATON_DEV_TOKENS")
	fs.StringVar(&j.Audience, "jwt-audience", os.Getenv("BATON_JWT_AUDIENCE"), "the aud the JWTs must carry (a Cognito app client id)")
	fs.StringVar(&j.JWKSURL, "jwks-url", os.Getenv("BATON_JWT_JWKS_URL"), "the issuer's JWKS (default: ISSUER/.well-known/jwks.json)")
	fs.StringVar(&j.JWKSFile, "jwks-file", os.Getenv("BATON_JWT_JWKS_FILE"), "read the issuer's JWKS from this file instead")
	fs.StringVar(&j.TenantClaim, "jwt-tenant-claim", os.Getenv("BATON_JWT_TENANT_CLAIM"), "the claim naming the caller's tenant (default tenant)")
	fs.StringVar(&j.ScopeClaim, "jwt-scope-claim", os.Getenv("BATON_JWT_SCOPE_CLAIM"), "the claim holding the caller's scopes (default scope, then scp)")
	scopeMap := fs.String("jwt-scope-map", os.Getenv("BATON_JWT_SCOPE_MAP"), "map the issuer's scopes to Baton's: from=scope+scope,… (baton/user=runs:read+runs:write)")
	fs.StringVar(&o.cfg.IAMPrincipals, "iam-principals", os.Getenv("BATON_IAM_PRINCIPALS"), `serve the routes again under /iam/ to SigV4 callers: a JSON object of IAM principal ARNs to {"tenant":…,"scopes":[…]}`)
	iamKeys := fs.String("iam-key", os.Getenv("BATON_DEV_IAM_KEYS"), "access keys baton dev accepts under /iam/, standing in for IAM: ACCESS_KEY_ID:SECRET=PRINCIPAL_ARN,…")
	tenantRate := fs.String("tenant-rate", os.Getenv("BATON_TENANT_RATE"), "each tenant's API request rate, a token bucket: R/s (or R, R/m); empty: no limit")
	tenantBurst := fs.String("tenant-burst", os.Getenv("BATON_TENANT_BURST"), "each tenant's burst of requests above --tenant-rate (default: the rate rounded up)")
	callerRate := fs.String("caller-rate", os.Getenv("BATON_CALLER_RATE"), "each caller's (token's, JWT subject's) API request rate: R/s; empty: no limit")
	callerBurst := fs.String("caller-burst", os.Getenv("BATON_CALLER_BURST"), "each caller's burst above --caller-rate")
	maxActive := fs.String("tenant-max-active", os.Getenv("BATON_TENANT_MAX_ACTIVE"), "cap each tenant's unfinished runs; the next start is a 429 too_many_active_runs (empty or 0: no cap)")
	maxSchedules := fs.String("max-schedules", os.Getenv("BATON_MAX_SCHEDULES"), "cap each tenant's schedules (default 100; -1: no cap); the next create is a 429 schedule_limit_reached")
	minInterval := fs.String("schedule-min-interval", os.Getenv("BATON_SCHEDULE_MIN_INTERVAL"), "the smallest gap between a schedule's fire times (default 1m)")
	clockOffset := fs.String("clock-offset", "", "run on a controllable clock this far (a Go duration, e.g. 0s or 2h) from the wall clock; POST /_dev/clock {\"advance\": \"90s\"} moves it forward (try schedules without waiting)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if *clockOffset != "" {
		d, err := time.ParseDuration(*clockOffset)
		if err != nil {
			return o, fmt.Errorf("--clock-offset: want a Go duration such as 0s or 90m, got %q", *clockOffset)
		}
		o.clock = app.NewDevClock(d)
	}
	o.cfg.CORSOrigins = app.List(*cors)
	limitFlags := map[string]struct {
		flag  string
		value *string
	}{"BATON_TENANT_RATE": {"--tenant-rate", tenantRate}, "BATON_TENANT_BURST": {"--tenant-burst", tenantBurst},
		"BATON_CALLER_RATE": {"--caller-rate", callerRate}, "BATON_CALLER_BURST": {"--caller-burst", callerBurst},
		"BATON_TENANT_MAX_ACTIVE": {"--tenant-max-active", maxActive}}
	lim, err := app.LimitsFrom(func(k string) string { return *limitFlags[k].value }, func(k string) string { return limitFlags[k].flag })
	if err != nil {
		return o, err
	}
	o.cfg.Limits = lim
	schedFlags := map[string]string{"BATON_MAX_SCHEDULES": *maxSchedules, "BATON_SCHEDULE_MIN_INTERVAL": *minInterval}
	if o.cfg.Schedules, err = app.SchedulesFromEnv(func(k, def string) string { return schedFlags[k] }); err != nil {
		return o, fmt.Errorf("%w (--max-schedules, --schedule-min-interval)", err)
	}
	if o.iamKeys, err = app.ParseIAMKeys(*iamKeys); err != nil {
		return o, fmt.Errorf("--iam-key: %w", err)
	}
	if len(o.iamKeys) > 0 && o.cfg.IAMPrincipals == "" {
		return o, fmt.Errorf("--iam-key needs --iam-principals, which maps the keys' principals to tenants")
	}
	if j.ScopeMap, err = app.ParseScopeMap(*scopeMap); err != nil {
		return o, fmt.Errorf("--jwt-scope-map: %w", err)
	}
	if j.Issuer == "" && (j.Audience != "" || j.JWKSURL != "" || j.JWKSFile != "") {
		return o, fmt.Errorf("--jwt-issuer is required with the other --jwt and --jwks flags")
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if (s.DynamoDBEndpoint == "") != (s.SQSEndpoint == "") {
		return o, fmt.Errorf("set both --dynamodb-endpoint and --sqs-endpoint, or neither (embedded stores)")
	}
	if s.Visibility < time.Second {
		return o, fmt.Errorf("--visibility-timeout must be at least 1s")
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.cfg.LogLevel)); err != nil {
		return o, fmt.Errorf("--log-level: %w", err)
	}
	s.Memory = s.DynamoDBEndpoint == ""
	s.OneProcess = true
	if o.cfg.Agents.File == "" {
		o.cfg.Agents.Bytes = demoAgents
	}
	// baton dev always enables the scripted provider, plus those listed
	// in BATON_PROVIDERS, configured from the environment like a
	// deployment (BATON_OPENAI_*, BATON_ANTHROPIC_*, BATON_BEDROCK_*).
	o.cfg.Providers = []string{app.ProviderScripted}
	for _, p := range app.List(os.Getenv("BATON_PROVIDERS")) {
		if p != app.ProviderScripted {
			o.cfg.Providers = append(o.cfg.Providers, p)
		}
	}
	// baton dev executes tools: http tools work anywhere (their
	// secret_env is read from baton dev's environment); lambda tools and
	// secret_ssm/secret_arn secrets load the AWS configuration (the usual
	// environment and shared files, AWS_ENDPOINT_URL_LAMBDA for a local
	// endpoint) the first time one is configured, so baton dev needs no
	// AWS setup when no tool uses AWS.
	o.cfg.ExecuteTools = true
	// The intent lease outlasts the default 30 s tool timeout, so a slow
	// tool is never taken for a crashed one.
	o.cfg.StallAfter, o.cfg.IntentLease, o.cfg.MaxReceives = 2*s.Visibility, s.Visibility+30*time.Second, 5
	o.cfg.LogText = true
	// EventBridge is not emulated: notifications go to --notify-url, or
	// to the log.
	o.cfg.Notify.Log = o.cfg.Notify.URL == ""
	return o, nil
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// parseDevTokens reads BATON_DEV_TOKENS=tenant=token,… A token may be
// followed by extra scopes, each after a '+' (tenant=token+crm:write):
// every dev token holds app.DevScopes plus its extras.
func parseDevTokens(s string) ([]app.Token, error) {
	var out []app.Token
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		tenant, rest, ok := strings.Cut(part, "=")
		fields := strings.Split(rest, "+")
		token := strings.TrimSpace(fields[0])
		if !ok || strings.TrimSpace(tenant) == "" || len(token) < 8 {
			return nil, fmt.Errorf("BATON_DEV_TOKENS: want tenant=token pairs (tokens of 8 or more characters, optionally followed by +scope for each extra scope), got %q", part)
		}
		t := app.Token{Token: token, Tenant: strings.TrimSpace(tenant), Scopes: app.DevScopes()}
		for _, sc := range fields[1:] {
			t.Scopes = append(t.Scopes, strings.TrimSpace(sc))
		}
		if err := t.Check(); err != nil {
			return nil, fmt.Errorf("BATON_DEV_TOKENS: token of tenant %s: %w", t.Tenant, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// buildDev builds what baton dev and baton invoke run: the real handlers
// on embedded or external stores, with the tokens of BATON_DEV_TOKENS
// (defaultTokens when it is unset) stored.
func buildDev(ctx context.Context, o devOptions, stderr io.Writer, defaultTokens []app.Token) (*app.App, []app.Token, error) {
	tokens := defaultTokens
	if env := os.Getenv("BATON_DEV_TOKENS"); env != "" {
		var err error
		if tokens, err = parseDevTokens(env); err != nil {
			return nil, nil, err
		}
	}
	deps := app.Deps{LogOutput: stderr, Features: features.All}
	if o.clock != nil {
		deps.Clock = o.clock
	}
	a, err := app.Build(ctx, o.cfg, deps)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range tokens {
		if t.Scopes == nil {
			t.Scopes = app.DevScopes()
		}
		if err := a.PutToken(ctx, t); err != nil {
			return nil, nil, fmt.Errorf("store dev token: %w", err)
		}
	}
	return a, tokens, nil
}

func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseDevFlags(args, stderr)
	if err != nil {
		return err
	}
	a, tokens, err := buildDev(ctx, o, stderr, []app.Token{{Token: app.NewToken("dev"), Tenant: "dev"}})
	if err != nil {
		return err
	}
	defer func() { _ = a.FlushTelemetry(context.Background()) }()
	err = a.Serve(ctx, app.ServeOptions{Addr: o.addr, Pollers: o.pollers, IntakeDir: o.intakeDir, IAMKeys: o.iamKeys, Clock: o.clock, Ready: func(base string) {
		banner(stdout, a, base, tokens, o.intakeDir)
	}})
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "baton dev: stopped")
	return nil
}

// banner is what baton dev prints once it listens on base: the agents
// and stores, every tenant's token, how to start a run (with the first
// tenant's), the console, who else may call (JWT issuer, IAM keys,
// browsers' origins) and the intake, then "ready".
func banner(w io.Writer, a *app.App, base string, tokens []app.Token, intakeDir string) {
	fmt.Fprintf(w, "baton dev: serving %s on %s (%s)\n", strings.Join(a.AgentSlugs(), ", "), base, a.Stores.Describe)
	for _, t := range tokens {
		var extra []string
		for _, s := range t.Scopes {
			if !slices.Contains(app.DevScopes(), s) {
				extra = append(extra, s)
			}
		}
		if len(extra) > 0 {
			fmt.Fprintf(w, "baton dev: token for tenant %s: %s (also %s)\n", t.Tenant, t.Token, strings.Join(extra, ", "))
			continue
		}
		fmt.Fprintf(w, "baton dev: token for tenant %s: %s\n", t.Tenant, t.Token)
	}
	agent, body := a.StartHint()
	fmt.Fprintf(w, `baton dev: try it from another terminal (agent %s, tenant %s):
  export BATON_URL=%s BATON_TOKEN=%s TOKEN=%s
  baton run --agent %s "hi"
  curl -s -X POST $BATON_URL/v1/runs -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    -d '%s'
`, agent, tokens[0].Tenant, base, tokens[0].Token, tokens[0].Token, agent, body)
	fmt.Fprintf(w, "baton dev: web console at %s/console/ (sign in with the token)\n", base)
	if j := a.Config.JWT; j.Enabled() {
		fmt.Fprintf(w, "baton dev: JWTs of issuer %s are accepted too (audience %s, tenant claim %s)\n", j.Issuer, cmp.Or(j.Audience, "any"), cmp.Or(j.TenantClaim, "the default"))
	}
	if len(a.Config.CORSOrigins) > 0 {
		fmt.Fprintf(w, "baton dev: browsers on %s may call the API (CORS)\n", strings.Join(a.Config.CORSOrigins, ", "))
	}
	if u := a.Config.Intake.QueueURL; u != "" {
		fmt.Fprintf(w, "baton dev: intake queue %s (dead letters: %s)\n", u, a.Config.Intake.DeadLetterURL)
	}
	if intakeDir != "" {
		fmt.Fprintf(w, "baton dev: intake folder %s: drop *.json intake messages there\n", intakeDir)
	}
	fmt.Fprintln(w, "baton dev: ready")
}
