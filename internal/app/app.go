package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/middleware"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/auth"
	"github.com/baton-agents/baton/internal/awsenv"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/executors"
	"github.com/baton-agents/baton/internal/guardrails"
	"github.com/baton-agents/baton/internal/httpapi"
	"github.com/baton-agents/baton/internal/intake"
	"github.com/baton-agents/baton/internal/providers"
	"github.com/baton-agents/baton/internal/schedules"
	"github.com/baton-agents/baton/internal/secrets"
	"github.com/baton-agents/baton/internal/telemetry"
	"github.com/baton-agents/baton/internal/toolspec"
	"github.com/baton-agents/baton/internal/worker"
)

// ProviderScripted is the scripted model provider, which baton dev always
// enables.
const ProviderScripted = core.ProviderScripted

// Queue is a step queue both ends of which the process holds: the
// runner sends to it, the local poller receives from it.
type Queue interface {
	core.StepQueue
	core.StepReceiver
}

// ToolHandler is a Go tool handler, for executor type go.
type ToolHandler = func(ctx context.Context, call core.ToolCall) (any, error)

// Deps are what a process injects beyond its Config; every field is
// optional.
type Deps struct {
	Clock core.Clock    // default core.SystemClock
	IDs   core.IDSource // default core.RandomIDs
	// ToolHandlers adds Go tool handlers by name to the built-in ones
	// ("echo"), for a bundle of one's own.
	ToolHandlers map[string]ToolHandler
	// Model replaces the providers Config.Providers enables.
	Model core.ModelProvider
	// Summarizer, when set, writes compaction summaries in place of the
	// summary model call (the agent's compaction.model or its model).
	Summarizer core.Summarizer
	// Log replaces the logger Config.LogLevel and LogText describe.
	Log *slog.Logger
	// LogOutput is where that logger writes (default os.Stderr).
	LogOutput io.Writer
	// WrapStore and WrapQueue wrap the store and the step queue before
	// anything uses them (the benchmark counts calls, tests inject
	// failures).
	WrapStore func(durable.Store) durable.Store
	WrapQueue func(Queue) Queue
	// InstrumentAWS adds middleware to the DynamoDB ("dynamodb") and SQS
	// ("sqs") clients of the stores.
	InstrumentAWS func(st *middleware.Stack, service string) error
	// TracerProvider replaces the exporter the OTEL_* variables choose
	// (tests record spans in memory).
	TracerProvider trace.TracerProvider
	// Features are the heavy subsystems this process links (none by
	// default: the scripted provider, no MCP client, no span exporter).
	Features Features
}

// Features are the heavy subsystems a function links only when it runs
// them: internal/features.All has them all but the EventBridge Scheduler
// client (baton dev, the worker); the API takes the span exporter and the
// EventBridge Scheduler client alone, the sweeper the A2A client alone (to
// cancel the remote tasks runs gave up on), and the intake function none,
// so they link no model provider SDK, Bedrock runtime client, MCP client
// or OpenTelemetry exporter, and only the API the Scheduler client.
type Features struct {
	// Models builds the model providers Config.Providers names; nil:
	// the scripted provider only, and a model call to any other one is
	// an error (only the worker and baton dev call models).
	Models func(ctx context.Context, enabled []string, pc providers.Config, aws awsenv.Loader, sec *secrets.Resolver, log *slog.Logger) (core.ModelRouter, error)
	// MCP opens the agents' MCP servers, listing their tools until ctx
	// ends; nil: an agents file with mcp_servers is refused where tools
	// execute.
	MCP func(ctx context.Context, servers map[string][]toolspec.MCPServer, sec *secrets.Resolver, log *slog.Logger) MCPTools
	// A2A builds the executors of remote A2A agent tools (executor type
	// a2a); nil: an agents file with such a tool is refused where tools
	// execute. Where tools do not execute, it is used to cancel remote
	// tasks (the sweeper).
	A2A func(sec *secrets.Resolver) executors.Factory
	// Tracing builds the span exporter the OTEL_* variables choose; nil:
	// no span is exported.
	Tracing func(ctx context.Context, o telemetry.Options) (telemetry.Settings, func(context.Context) error, error)
	// BedrockGuardrails builds the agents' Amazon Bedrock Guardrails rules
	// (internal/guardrails/bedrock); nil: where steps run
	// (Config.ExecuteTools), an agents file with such a rule is refused;
	// elsewhere the rule is validated only, since guardrails are checked
	// only while a step is planned or a model reply applied.
	BedrockGuardrails guardrails.BedrockBuilder
	// Memory builds the long-term memory service (internal/memory, with
	// its embedders) where steps run; nil: runs of agents with memory
	// recall nothing (each run records why), and their memory tools and
	// extractions fail with an error saying so.
	Memory func(MemoryDeps) (MemoryService, error)
	// Scheduler builds the EventBridge Scheduler client that keeps each
	// schedule's EventBridge schedule (internal/schedules/eventbridge):
	// in the stack's schedule group, sending to the intake queue as the
	// scheduler role. Only the API links it (internal/features/spans);
	// nil: no EventBridge schedule is kept (baton dev fires schedules in
	// process).
	Scheduler func(cfg aws.Config, group, roleARN, queueARN string) core.Scheduler
}

// MCPTools are the tools of the agents' MCP servers: their listings and
// the executor of mcp/<server>/<tool> calls.
type MCPTools interface {
	core.ToolExecutor
	core.ToolSource
}

// App is a wired process.
type App struct {
	Config Config
	// Runner is the durable runner (the sweeper calls Runner.Sweep).
	Runner *durable.Runner
	// API and Worker are the Lambdas' handlers.
	API    *httpapi.API
	Worker *worker.Worker
	// Steps receives step messages, for a local poller.
	Steps core.StepReceiver
	// Store is the run store the runner uses (wrapped by Deps.WrapStore).
	Store durable.Store
	// Tokens is the API token store.
	Tokens core.TokenStore
	// Agents is the deployment's own agents file, and AgentVersion its
	// version (which a deploy points the default alias at).
	Agents       *agents.Registry
	AgentVersion string
	// Tools executes server tools; nil unless Config.ExecuteTools.
	Tools core.ToolExecutor
	// Schedules is the schedule service (baton dev runs its Loop).
	Schedules *schedules.Service
	// Stores describes the stores.
	Stores StoresInfo
	Log    *slog.Logger
	// Intake handles intake batches and IntakeQueue receives them (baton
	// dev's poller); both nil unless an intake queue is configured
	// (always on the embedded stores). IntakeDeadLetters is its
	// dead-letter queue.
	Intake            *intake.Handler
	IntakeQueue       core.MessageQueue
	IntakeDeadLetters core.MessageQueue

	opts          durable.Options
	cleanup       func(context.Context) error
	stopTelemetry func(context.Context) error
}

// FlushTelemetry exports the spans not yet exported and stops tracing
// (baton dev calls it on exit).
func (a *App) FlushTelemetry(ctx context.Context) error { return a.stopTelemetry(ctx) }

// NewLogger is the logger of Config: JSON (the Lambdas) or text (baton
// dev) on w at level (info when it does not parse).
func NewLogger(w io.Writer, level string, text bool) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	o := &slog.HandlerOptions{Level: l}
	if text {
		return slog.New(slog.NewTextHandler(w, o))
	}
	return slog.New(slog.NewJSONHandler(w, o))
}

// Build wires everything once: it loads the agents, opens the stores,
// builds the enabled model providers and (with ExecuteTools) the tool
// executors, the durable runner and the handlers.
func Build(ctx context.Context, cfg Config, deps Deps) (*App, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := deps.Log
	if log == nil {
		out := deps.LogOutput
		if out == nil {
			out = os.Stderr
		}
		log = NewLogger(out, cfg.LogLevel, cfg.LogText)
	}
	clock := deps.Clock
	if clock == nil {
		clock = core.SystemClock{}
	}
	file, err := agentsBytes(cfg.Agents)
	if err != nil {
		return nil, err
	}
	env := agentsEnvironment(cfg.ExecuteTools, deps)
	bootVersion, reg, err := agents.NewVersion(file, clock.Now(), "deploy")
	if err != nil || reg.Lacks(env) {
		return nil, agentsFileError(cfg.Agents, file, env, err)
	}
	if err := reg.CheckCompactionModels(cfg.Providers); err != nil {
		return nil, err
	}
	// One AWS configuration, loaded when something first needs it, and
	// one secret resolver, for the stores, the providers and the tools.
	loadAWS := awsenv.Lazy(awsenv.Options{Region: cfg.Region, DynamoDBEndpoint: cfg.Stores.DynamoDBEndpoint, SQSEndpoint: cfg.Stores.SQSEndpoint})
	getenv := func(k string) string { v, _ := cfg.Env(k); return v }
	sec := secrets.New(secrets.Options{AWS: loadAWS, Getenv: getenv})
	// One builder of http and lambda endpoints, for the tools, the hooks
	// and the guardrail hooks: one Lambda client, secrets resolved once.
	remote := executors.NewRemote(executors.Options{AWSConfig: loadAWS, Secrets: sec})
	model := deps.Model
	if model == nil {
		if model, err = models(ctx, cfg, deps.Features, loadAWS, sec, log); err != nil {
			return nil, err
		}
	}
	// The deployment's own file is built now, whole; other versions when
	// a run of them first needs them (versions.go).
	builder := &versionBuilder{executeTools: cfg.ExecuteTools, features: deps.Features, handlers: deps.ToolHandlers, aws: loadAWS, sec: sec, remote: remote, log: log}
	boot, router, err := builder.build(ctx, bootVersion.ID, reg, true)
	if err != nil {
		return nil, err
	}
	var remoteTasks durable.RemoteTasks
	if router != nil {
		remoteTasks = remoteAgents(reg, router)
	}
	if !cfg.ExecuteTools && deps.Features.A2A != nil {
		// The sweeper cancels the tasks of remote agent tools' calls that
		// runs gave up on (durable/remote.go), with their executors only.
		if remoteTasks, err = remoteAgentsOnly(reg, deps.Features.A2A(sec)); err != nil {
			return nil, err
		}
	}
	callbacks, err := callbackSender(ctx, reg, remote)
	if err != nil {
		return nil, err
	}
	prices, metering, err := pricing(cfg)
	if err != nil {
		return nil, err
	}
	tel, stopTelemetry, err := tracing(ctx, cfg, deps)
	if err != nil {
		return nil, err
	}
	emf, err := metrics(cfg)
	if err != nil {
		return nil, err
	}
	st, err := openStores(ctx, cfg, loadAWS, clock, deps)
	if err != nil {
		return nil, err
	}
	for _, t := range cfg.Tokens {
		if err := putToken(ctx, st.tokens, t); err != nil {
			return nil, err
		}
	}
	if err := publishBundled(ctx, st.store, bootVersion); err != nil {
		return nil, err
	}
	versions := &catalog{store: st.store, boot: boot, builder: builder, byID: map[string]*loading{}}
	a := &App{Config: cfg, Steps: st.queue, Store: st.store, Tokens: st.tokens, Agents: reg, AgentVersion: bootVersion.ID, Tools: boot.Tools, Stores: st.info, Log: log, cleanup: st.cleanup, stopTelemetry: stopTelemetry}
	a.opts = durable.Options{Notifier: cfg.Notify.notifier(loadAWS, log), Callbacks: callbacks, RemoteTasks: remoteTasks, Versions: versions, Store: st.store, Deltas: st.deltas, Queue: st.queue, Agents: reg, Model: model, Summarizer: deps.Summarizer, Clock: clock, IDs: deps.IDs, Log: log,
		Pricer: prices, Metering: metering, Telemetry: tel, Metrics: emf,
		Limits: durable.Limits{StallAfter: cfg.StallAfter, ChainLease: cfg.chainLease(), IntentLease: cfg.IntentLease, MaxReceives: cfg.MaxReceives, MaxActiveRuns: cfg.Limits.MaxActiveRuns, Redelivery: cfg.stepVisibility()}}
	if cfg.ExecuteTools {
		mem, err := memoryService(cfg, deps.Features, st.store, versions, model, loadAWS, sec, clock, log)
		if err != nil {
			return nil, err
		}
		if mem != nil {
			a.opts.Memory = mem
			// The deployment's own version was built before the
			// service: its calls of the memory tools go to it too.
			builder.memory = mem
			boot.Tools = withMemory{tools: boot.Tools, memory: mem}
			a.Tools = boot.Tools
		}
	}
	a.Runner = a.NewRunner()
	a.API = httpapi.New(a.Runner, st.tokens, st.idem, clock, log, httpapi.Config{MaxBodyBytes: cfg.MaxBody, Providers: cfg.Providers, AgentsEnv: agents.Environment{GoHandlers: builder.handlerNames(), Providers: providers.Known}, CheckAgents: builder.check, CORSOrigins: cfg.CORSOrigins,
		TenantRate: cfg.Limits.TenantRate, CallerRate: cfg.Limits.CallerRate})
	a.API.Memories = st.memories
	if cfg.Limits.TenantRate.Rate > 0 || cfg.Limits.CallerRate.Rate > 0 {
		a.API.Limits = st.limits
	}
	if cfg.IAMPrincipals != "" {
		if a.API.IAM, err = auth.ParseIAMPrincipals(cfg.IAMPrincipals, httpapi.KnownScopes); err != nil {
			return nil, fmt.Errorf("BATON_IAM_PRINCIPALS: %w", err)
		}
	}
	if cfg.JWT.Enabled() {
		jc := cfg.JWT
		jc.Log = log
		if a.API.JWT, err = auth.NewJWT(jc); err != nil {
			return nil, err
		}
	}
	a.Worker = &worker.Worker{Runner: a.Runner, Log: log, Extender: st.queue, Visibility: cfg.stepVisibility(), Chain: cfg.chainLimits(),
		Routes: map[core.StepKind]func(context.Context, core.Step, durable.Attempt) error{core.StepMemoryExtract: a.Runner.ExtractMemories}}
	if err := a.openIntake(ctx, st, clock); err != nil {
		return nil, err
	}
	if err := a.openSchedules(ctx, st, deps.Features, loadAWS, clock); err != nil {
		return nil, err
	}
	return a, nil
}

// MustBuild reads the configuration from the environment and builds the
// app, exiting the process with a clear message when it cannot (a Lambda
// init failure). executeTools is true in the worker only; f are the
// features the function links.
func MustBuild(ctx context.Context, executeTools bool, f Features) *App {
	cfg, err := ConfigFromEnv(os.LookupEnv)
	if err == nil {
		cfg.ExecuteTools = executeTools
		var a *App
		if a, err = Build(ctx, cfg, Deps{Features: f}); err == nil {
			return a
		}
	}
	fmt.Fprintln(os.Stderr, "baton: configuration error:", err)
	os.Exit(1)
	return nil
}

// NewRunner returns a new durable runner on the app's ports, with an
// empty transcript cache (a worker that has not served a session yet).
func (a *App) NewRunner() *durable.Runner { return durable.New(a.opts) }

// Sweep runs the sweeper once over at most max runs.
func (a *App) Sweep(ctx context.Context, max int) (int, error) { return a.Runner.Sweep(ctx, max) }

// AgentSlugs lists the agents.
func (a *App) AgentSlugs() []string { return a.Agents.Slugs() }

// DeleteResources deletes the table and queues Build created
// (Stores.CreateResources); it does nothing otherwise.
func (a *App) DeleteResources(ctx context.Context) error {
	if a.cleanup == nil {
		return nil
	}
	return a.cleanup(ctx)
}

// LoadAgents parses the agents file c names.
func LoadAgents(c Agents) (*agents.Registry, error) {
	b, err := agentsBytes(c)
	if err != nil {
		return nil, err
	}
	reg, err := agents.Parse(b)
	if err != nil {
		return nil, agentsFileError(c, b, agents.Environment{}, err)
	}
	return reg, nil
}

// agentsBytes reads the agents file c names.
func agentsBytes(c Agents) ([]byte, error) {
	switch {
	case len(c.Bytes) > 0:
		return c.Bytes, nil
	case strings.TrimSpace(c.JSON) != "":
		return []byte(c.JSON), nil
	}
	b, err := os.ReadFile(c.File)
	if err != nil {
		return nil, fmt.Errorf("read agents file: %w", err)
	}
	return b, nil
}

// agentsFileError is the error of an agents file b the loader refused
// (err) or that needs what the build lacks (env): every problem
// agents.ValidateIn finds, each with its line and column, and the
// command that lists them; the loader's error, naming the file, when it
// finds none.
func agentsFileError(c Agents, b []byte, env agents.Environment, err error) error {
	name, isFile := "BATON_AGENTS_JSON", false
	switch {
	case len(c.Bytes) > 0:
		name = "the embedded agents file"
	case strings.TrimSpace(c.JSON) == "":
		name, isFile = c.File, true
	}
	if _, problems := agents.ValidateIn(b, env); len(problems) > 0 {
		return &agents.FileError{Name: name, Problems: problems, File: isFile}
	}
	if err == nil {
		err = errors.New("it needs a provider or a Go handler this build lacks")
	}
	if isFile {
		return fmt.Errorf("agents file %s: %w", name, err)
	}
	return err
}

// agentsEnvironment is what this build provides an agents file: the
// providers Baton knows (unless deps.Model replaces them), and where
// tools execute the Go handlers (the built-in ones and deps').
func agentsEnvironment(executeTools bool, deps Deps) agents.Environment {
	var env agents.Environment
	if deps.Model == nil {
		env.Providers = providers.Known
	}
	if executeTools {
		env.GoHandlers = GoHandlers(deps.ToolHandlers)
	}
	return env
}

// GoHandlers lists the built-in Go tool handlers and those of extra.
func GoHandlers(extra map[string]ToolHandler) []string { return goRegistry(extra).Names() }

// goRegistry is the registry of the built-in Go tool handlers and extra.
func goRegistry(extra map[string]ToolHandler) *executors.GoRegistry {
	goh := executors.NewGoRegistry()
	for name, h := range extra {
		goh.Register(name, h)
	}
	return goh
}

// models returns the model providers cfg enables, configured from the
// deployment's environment as package providers describes: endpoints and
// API keys come from BATON_OPENAI_*, BATON_ANTHROPIC_* and
// BATON_BEDROCK_* (keys from the environment, SSM or Secrets Manager,
// read here once), never from a run's model spec. A provider this build
// does not include, or a listed provider whose configuration is missing,
// is a configuration error.
func models(ctx context.Context, cfg Config, f Features, aws awsenv.Loader, sec *secrets.Resolver, log *slog.Logger) (core.ModelRouter, error) {
	pc, err := providers.ConfigFromEnv(cfg.Env)
	if err != nil {
		return nil, err
	}
	if pc.Bedrock.Region == "" {
		pc.Bedrock.Region = cfg.Region
	}
	if f.Models != nil {
		return f.Models(ctx, cfg.Providers, pc, aws, sec, log)
	}
	r := core.ModelRouter{}
	for _, name := range cfg.Providers {
		if name == core.ProviderScripted {
			r[name] = core.ScriptedModel{}
		} else {
			r[name] = unlinked(name)
		}
	}
	return r, nil
}

// unlinked is a model provider this function does not link: only the
// worker (and baton dev) call models.
type unlinked string

func (u unlinked) Complete(context.Context, core.ModelRequest) (core.ModelReply, error) {
	return core.ModelReply{}, fmt.Errorf("model provider %s is not linked into this function: model calls run in the worker", string(u))
}
