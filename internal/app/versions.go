package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/awsenv"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/executors"
	"github.com/baton-agents/baton/internal/guardrails"
	"github.com/baton-agents/baton/internal/secrets"
	"github.com/baton-agents/baton/internal/toolspec"
)

// versionBuilder builds an agent version's adapters from its
// declarations: the step machines of agents with guardrails or hooks of
// their own and, where tools execute, the tool executors and the MCP
// servers' tools. The composition root is the only place that does.
type versionBuilder struct {
	executeTools bool
	features     Features
	handlers     map[string]ToolHandler
	aws          awsenv.Loader
	sec          *secrets.Resolver
	remote       *executors.Remote
	log          *slog.Logger
	// memory executes the memory tools where steps run (set once the
	// memory service is built, after the deployment's own version).
	memory core.ToolExecutor
}

// goHandlers is the registry of the built-in Go tool handlers and the
// process's own.
func (b *versionBuilder) goHandlers() *executors.GoRegistry { return goRegistry(b.handlers) }

// check validates what of reg only building checks (its guardrail
// rules, as a process that runs no steps builds them): the API calls it
// on a published file.
func (b *versionBuilder) check(reg *agents.Registry) error {
	_, err := agentMachines(reg, guardrails.Deps{AWS: b.aws, Secrets: b.sec, Remote: b.remote, Log: b.log, ValidateOnly: true})
	return err
}

// handlerNames lists the Go tool handlers a version may name.
func (b *versionBuilder) handlerNames() []string { return b.goHandlers().Names() }

// build builds version id of reg. The deployment's own file (strict) must
// build whole: what it needs and this build lacks is an error at cold
// start. An older version's tool whose Go handler or executor type this
// build no longer has fails each call with an error naming the version
// and what is missing, never runs elsewhere.
func (b *versionBuilder) build(ctx context.Context, id string, reg *agents.Registry, strict bool) (*durable.Version, *executors.Router, error) {
	v := &durable.Version{ID: id, Agents: reg}
	var err error
	// Guardrails are consulted only while a step is planned (input and
	// tool stages) or a model reply applied (output stage): only where
	// steps run (executeTools: the worker, baton dev). The API, the
	// sweeper and the intake function build the same machines to validate
	// the agents file and to apply outside inputs (client results,
	// approvals, expiry), which consult none; there a rule type the
	// process does not link (Bedrock Guardrails) is validated only.
	gd := guardrails.Deps{AWS: b.aws, Secrets: b.sec, Remote: b.remote, Log: b.log, Bedrock: b.features.BedrockGuardrails, ValidateOnly: !b.executeTools}
	if v.Machines, err = agentMachines(reg, gd); err != nil {
		return nil, nil, err
	}
	if err := addAgentHooks(ctx, reg, b.remote, b.log, v.Machines); err != nil {
		return nil, nil, err
	}
	if !b.executeTools {
		return v, nil, nil
	}
	goh := b.goHandlers()
	// http and lambda tools are built here, once per version: signing
	// secrets are resolved and the Lambda client created when first
	// needed. AWS is loaded only when a tool needs it.
	factories := b.remote.Factories(ctx)
	if b.features.A2A != nil {
		factories[toolspec.TypeA2A] = b.features.A2A(b.sec)
	}
	tools := reg.Executors()
	missing := map[string]string{}
	if !strict {
		for slug, byName := range tools {
			for name, ex := range byName {
				reason := ""
				if _, ok := goh.Lookup(ex.Handler); ex.Type == toolspec.TypeGo && !ok {
					reason = fmt.Sprintf("the Go handler %q, which this build does not register", ex.Handler)
				} else if ex.Type != toolspec.TypeGo && factories[ex.Type] == nil {
					reason = fmt.Sprintf("the %s executor, which this build does not link", ex.Type)
				}
				if reason != "" {
					missing[slug+"\x00"+name] = reason
					delete(byName, name)
				}
			}
		}
	}
	router, err := executors.NewRouter(tools, goh, factories)
	if err != nil {
		return nil, nil, err
	}
	var exec core.ToolExecutor = router
	if len(missing) > 0 {
		exec = missingTools{version: id, missing: missing, next: router}
	}
	// MCP servers' tools are discovered here (the worker), never in the
	// API, and offered to each run before its model turns.
	m, err := mcpTools(ctx, reg, b.features, b.sec, b.log)
	if err != nil {
		return nil, nil, err
	}
	if m != nil {
		exec, v.ToolSource = withMCP{tools: exec, mcp: m}, m
	}
	if b.memory != nil {
		exec = withMemory{tools: exec, memory: b.memory}
	}
	v.Tools = exec
	return v, router, nil
}

// missingTools fails the calls of an old version's tools that this build
// can no longer execute.
type missingTools struct {
	version string
	missing map[string]string // agent \x00 tool → what is missing
	next    core.ToolExecutor
}

func (m missingTools) Execute(ctx context.Context, call core.ToolCall) (any, error) {
	if why, ok := m.missing[call.Agent+"\x00"+call.ToolName]; ok {
		return nil, fmt.Errorf("agent version %s: tool %s of agent %s needs %s", m.version, call.ToolName, call.Agent, why)
	}
	return m.next.Execute(ctx, call)
}

// catalog loads agent versions from the store and builds each once
// (durable.Versions). The deployment's own file is built at cold start;
// another version when a run of it first needs it.
type catalog struct {
	store   core.AgentVersionStore
	boot    *durable.Version
	builder *versionBuilder
	mu      sync.Mutex
	byID    map[string]*loading
}

// loading is a version being built, or built: the runs that need it
// first wait for one build; one that failed is built again next time.
type loading struct {
	once sync.Once
	v    *durable.Version
	err  error
}

func (c *catalog) Load(ctx context.Context, id string) (*durable.Version, error) {
	if id == "" || id == c.boot.ID {
		return c.boot, nil
	}
	c.mu.Lock()
	l := c.byID[id]
	if l == nil {
		l = &loading{}
		c.byID[id] = l
	}
	c.mu.Unlock()
	l.once.Do(func() { l.v, l.err = c.build(ctx, id) })
	if l.err != nil {
		c.mu.Lock()
		if c.byID[id] == l {
			delete(c.byID, id)
		}
		c.mu.Unlock()
	}
	return l.v, l.err
}

// build reads version id from the store and builds it.
func (c *catalog) build(ctx context.Context, id string) (*durable.Version, error) {
	stored, err := c.store.GetAgentVersion(ctx, id)
	if err != nil {
		return nil, err
	}
	reg, err := agents.Parse(stored.File)
	if err != nil {
		return nil, fmt.Errorf("agent version %s no longer loads in this build: %w", id, err)
	}
	v, _, err := c.builder.build(ctx, id, reg, false)
	if err != nil {
		return nil, fmt.Errorf("agent version %s cannot be built: %w", id, err)
	}
	return v, nil
}

// publishBundled stores the deployment's own agents file as a version and,
// when a deploy brought a file the default alias was not yet pointed at
// by a deploy, points default at it (keeping its tenant pins). A cold
// start of an unchanged deployment reads the alias alone and changes
// nothing: a rollback made through the API stays until the next deploy.
func publishBundled(ctx context.Context, store core.AgentVersionStore, v core.AgentVersion) error {
	published := false
	for range 5 {
		cur, err := store.GetAgentAlias(ctx, core.DefaultAlias)
		var prev int64
		switch {
		case errors.Is(err, core.ErrNotFound):
		case err != nil:
			return fmt.Errorf("read alias default: %w", err)
		case cur.Deployed == v.ID:
			return nil
		default:
			prev = cur.Revision
		}
		if !published {
			// Stored unless its id is (another function of the deploy,
			// or an earlier publish of the same file).
			if _, _, err := store.PutAgentVersion(ctx, v); err != nil {
				return fmt.Errorf("publish the agents file: %w", err)
			}
			published = true
		}
		next := core.AgentAlias{Name: core.DefaultAlias, Routes: []core.AliasRoute{{Version: v.ID, Weight: 100}}, Tenants: cur.Tenants,
			Deployed: v.ID, UpdatedAt: v.PublishedAt, UpdatedBy: v.PublishedBy}
		if _, err = store.PutAgentAlias(ctx, next, prev); !errors.Is(err, core.ErrConflict) {
			return err
		}
	}
	return fmt.Errorf("alias default kept changing while this deployment pointed it at %s", v.ID)
}
