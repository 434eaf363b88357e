package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/awsenv"
	"github.com/baton-agents/baton/internal/config"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/dynamostore"
	"github.com/baton-agents/baton/internal/executors"
	"github.com/baton-agents/baton/internal/httpapi"
	"github.com/baton-agents/baton/internal/providers"
	"github.com/baton-agents/baton/internal/providers/setup"
	"github.com/baton-agents/baton/internal/sqsqueue"
	"github.com/baton-agents/baton/internal/worker"
)

// App is a wired deployment.
type App struct {
	Runner *durable.Runner
	API    *httpapi.API
	Worker *worker.Worker
	Log    *slog.Logger
}

// Options adds what a custom bundle brings (Go tool handlers) and says
// whether this function executes tools.
type Options struct {
	GoHandlers *executors.GoRegistry
	// ExecuteTools builds the server tools' executors (resolving their
	// signing secrets and AWS clients at cold start). Only the worker
	// executes tools; the API and the sweeper leave it false and need no
	// access to tool secrets.
	ExecuteTools bool
}

// Logger is the JSON logger of the functions, at cfg.LogLevel.
func Logger(level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}

// Models returns the model providers listed in BATON_PROVIDERS (scripted,
// openai, anthropic, bedrock), configured from the deployment's
// environment as package providers describes: endpoints and API keys come
// from BATON_OPENAI_*, BATON_ANTHROPIC_* and BATON_BEDROCK_* (keys from
// the environment, SSM or Secrets Manager, read here once), never from a
// run's model spec. A provider this build does not include, or a listed
// provider whose configuration is missing, is a configuration error.
func Models(ctx context.Context, cfg config.Config) (core.ModelRouter, error) {
	pc, err := providers.ConfigFromEnv(os.LookupEnv)
	if err != nil {
		return nil, err
	}
	if pc.Bedrock.Region == "" {
		pc.Bedrock.Region = cfg.Region
	}
	return setup.Router(ctx, cfg.Providers, pc, setup.Deps{Log: Logger(cfg.LogLevel)})
}

// LoadAgents reads the registry from BATON_AGENTS_JSON or the bundled
// file.
func LoadAgents(cfg config.Config) (*agents.Registry, error) {
	if strings.TrimSpace(cfg.AgentsJSON) != "" {
		return agents.Parse([]byte(cfg.AgentsJSON))
	}
	return agents.LoadFile(cfg.AgentsFile)
}

// Build wires everything once.
func Build(ctx context.Context, cfg config.Config, opts Options) (*App, error) {
	log := Logger(cfg.LogLevel)
	reg, err := LoadAgents(cfg)
	if err != nil {
		return nil, err
	}
	models, err := Models(ctx, cfg)
	if err != nil {
		return nil, err
	}
	var tools core.ToolExecutor
	if opts.ExecuteTools {
		goh := opts.GoHandlers
		if goh == nil {
			goh = executors.NewGoRegistry()
		}
		// http and lambda tools are built here, once: signing secrets are
		// resolved and the Lambda client created at cold start. AWS is
		// loaded only when a tool needs it (a lambda tool, an SSM or
		// Secrets Manager secret).
		router, err := executors.NewRouter(reg, goh, executors.Factories(ctx, executors.Options{AWSConfig: executors.AWSConfigLoader(cfg.Region)}))
		if err != nil {
			return nil, err
		}
		tools = router
	}
	clients, err := awsenv.New(ctx, awsenv.Options{Region: cfg.Region})
	if err != nil {
		return nil, err
	}
	store := dynamostore.New(clients.DynamoDB, cfg.Table)
	q := sqsqueue.New(clients.SQS, cfg.QueueURL)
	clock := core.SystemClock{}
	eng := durable.New(durable.Options{Store: store, Queue: q, Agents: reg, Model: models, Tools: tools, Clock: clock, Log: log,
		Limits: durable.Limits{StallAfter: cfg.StallAfter, IntentLease: cfg.IntentLease, MaxReceives: cfg.MaxReceives}})
	api := httpapi.New(eng, store, store, clock, log, httpapi.Config{MaxBodyBytes: cfg.MaxBody, Providers: cfg.Providers})
	return &App{Runner: eng, API: api, Worker: &worker.Worker{Runner: eng, Log: log}, Log: log}, nil
}

// MustBuild loads the configuration and builds the app, exiting the
// process with a clear message when it cannot (a Lambda init failure).
func MustBuild(ctx context.Context, opts Options) *App {
	cfg, err := config.Load()
	if err == nil {
		var a *App
		if a, err = Build(ctx, cfg, opts); err == nil {
			return a
		}
	}
	fmt.Fprintln(os.Stderr, "baton: configuration error:", err)
	os.Exit(1)
	return nil
}
