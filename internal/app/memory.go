package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/awsenv"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/providers"
	"github.com/baton-agents/baton/internal/secrets"
)

// MemoryService is the deployment's long-term memory where steps run
// (package memory): recall before first turns, the memory tools, and
// the extraction of completed runs.
type MemoryService interface {
	durable.MemoryService
	core.ToolExecutor
}

// MemoryDeps is what Features.Memory builds the memory service from.
type MemoryDeps struct {
	Store core.MemoryStore
	// Models runs extractions (the deployment's providers).
	Models core.ModelProvider
	// Agents finds an agent version's memory declaration.
	Agents func(ctx context.Context, agent, version string) (*agents.MemorySpec, error)
	// Providers are the deployment's provider settings (the OpenAI
	// embedder's endpoint and key, Bedrock's region).
	Providers providers.Config
	AWS       awsenv.Loader
	Secrets   *secrets.Resolver
	Clock     core.Clock
	Log       *slog.Logger
}

// memoryService builds the memory service with f where steps run; nil
// when the process links none (runs of agents with memory then recall
// nothing, which each run records, and their memory tools fail).
func memoryService(cfg Config, f Features, store core.MemoryStore, versions durable.Versions, model core.ModelProvider, loadAWS awsenv.Loader, sec *secrets.Resolver, clock core.Clock, log *slog.Logger) (MemoryService, error) {
	if f.Memory == nil {
		return nil, nil
	}
	pc, err := providers.ConfigFromEnv(cfg.Env)
	if err != nil {
		return nil, err
	}
	if pc.Bedrock.Region == "" {
		pc.Bedrock.Region = cfg.Region
	}
	lookup := func(ctx context.Context, agent, version string) (*agents.MemorySpec, error) {
		v, err := versions.Load(ctx, version)
		if err != nil {
			return nil, err
		}
		a, ok := v.Agents.Get(agent)
		if !ok {
			return nil, fmt.Errorf("no agent %q in agent version %q", agent, version)
		}
		return a.Spec.Memory, nil
	}
	return f.Memory(MemoryDeps{Store: store, Models: model, Agents: lookup, Providers: pc, AWS: loadAWS, Secrets: sec, Clock: clock, Log: log})
}

// withMemory executes the memory tools' calls with the memory service,
// every other call with tools.
type withMemory struct {
	tools  core.ToolExecutor
	memory core.ToolExecutor
}

func (w withMemory) Execute(ctx context.Context, call core.ToolCall) (any, error) {
	if call.Declaration.Executor == core.ExecutorMemory {
		return w.memory.Execute(ctx, call)
	}
	return w.tools.Execute(ctx, call)
}
