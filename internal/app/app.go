// Package app wires a deployed Baton from its configuration: AWS clients,
// the DynamoDB store, the SQS step queue, the agent registry, model
// providers and tool executors, the engine, and the API and worker
// handlers. Each Lambda main calls Build once at cold start.
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
	"github.com/baton-agents/baton/internal/dynamostore"
	"github.com/baton-agents/baton/internal/engine"
	"github.com/baton-agents/baton/internal/executors"
	"github.com/baton-agents/baton/internal/httpapi"
	"github.com/baton-agents/baton/internal/sqsqueue"
	"github.com/baton-agents/baton/internal/worker"
)

// App is a wired deployment.
type App struct {
	Engine *engine.Engine
	API    *httpapi.API
	Worker *worker.Worker
	Log    *slog.Logger
}

// Options adds what a custom bundle brings: Go tool handlers.
type Options struct {
	GoHandlers *executors.GoRegistry
}

// Logger is the JSON logger of the functions, at cfg.LogLevel.
func Logger(level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}

// Models returns the enabled model providers. A provider this build
// does not include is a configuration error.
func Models(enabled []string) (core.ModelRouter, error) {
	r := core.ModelRouter{}
	for _, p := range enabled {
		switch p {
		case core.ProviderScripted:
			r[p] = core.ScriptedModel{}
		default:
			return nil, fmt.Errorf("model provider %q is not available in this build (available: %s)", p, core.ProviderScripted)
		}
	}
	return r, nil
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
	models, err := Models(cfg.Providers)
	if err != nil {
		return nil, err
	}
	goh := opts.GoHandlers
	if goh == nil {
		goh = executors.NewGoRegistry()
	}
	router, err := executors.NewRouter(reg, goh, nil)
	if err != nil {
		return nil, err
	}
	clients, err := awsenv.New(ctx, awsenv.Options{Region: cfg.Region})
	if err != nil {
		return nil, err
	}
	store := dynamostore.New(clients.DynamoDB, cfg.Table)
	q := sqsqueue.New(clients.SQS, cfg.QueueURL)
	clock := core.SystemClock{}
	eng := engine.New(core.NewMachine(clock), store, q, core.IO{Model: models, Tools: router}, clock, core.RandomIDs{}, reg, log,
		engine.Config{StallAfter: cfg.StallAfter, IntentLease: cfg.IntentLease, MaxReceives: cfg.MaxReceives})
	api := httpapi.New(eng, store, store, clock, log, httpapi.Config{MaxBodyBytes: cfg.MaxBody, Providers: cfg.Providers})
	return &App{Engine: eng, API: api, Worker: &worker.Worker{Engine: eng, Log: log}, Log: log}, nil
}

// MustBuild loads the configuration and builds the app, exiting the
// process with a clear message when it cannot (a Lambda init failure).
func MustBuild(ctx context.Context) *App {
	cfg, err := config.Load()
	if err == nil {
		var a *App
		if a, err = Build(ctx, cfg, Options{}); err == nil {
			return a
		}
	}
	fmt.Fprintln(os.Stderr, "baton: configuration error:", err)
	os.Exit(1)
	return nil
}
