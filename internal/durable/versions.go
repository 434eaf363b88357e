package durable

import (
	"context"
	"errors"
	"fmt"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
)

// Version is one agent version as the runner uses it: the declarations
// of its agents file and the adapters the composition root built from
// them. A run records the version it started on (core.RunConfig's
// AgentVersion) and every later step, in every process, runs on it.
type Version struct {
	// ID is the version's id; "" is the deployment's own file for runs
	// started before versions were recorded.
	ID     string
	Agents *agents.Registry
	// Machines carries the hooks of the agents configured with their own
	// (guardrails, mediator, completion policy), by slug; a run of any
	// other agent uses the runner's Machine.
	Machines map[string]*core.Machine
	// Tools executes the version's server tools; nil where tools do not
	// execute (the API, the sweeper).
	Tools core.ToolExecutor
	// ToolSource offers the tools of the version's MCP servers (nil:
	// none).
	ToolSource core.ToolSource
}

// Versions loads agent versions, built (the composition root caches each
// one). Load of "" is the deployment's own file.
type Versions interface {
	Load(ctx context.Context, id string) (*Version, error)
}

// ErrUnknownVersion: a run request names a version or an alias that is
// not stored (400).
var ErrUnknownVersion = errors.New("unknown agent version")

// ErrVersionNotAllowed: a run request names a version and its agent does
// not let callers choose one (400).
var ErrVersionNotAllowed = errors.New("the agent does not let a request choose its version")

// staticVersions is the one version of a runner wired without Versions
// (Options.Agents, AgentMachines, Tools and ToolSource): every run runs
// on it, whatever it recorded.
type staticVersions struct{ v *Version }

func (s staticVersions) Load(context.Context, string) (*Version, error) { return s.v, nil }

// version loads the version a run started on.
func (e *Runner) version(ctx context.Context, cfg core.RunConfig) (*Version, error) {
	v, err := e.Versions.Load(ctx, cfg.AgentVersion)
	if err != nil {
		return nil, fmt.Errorf("agent version %s of run: %w", cfg.AgentVersion, err)
	}
	return v, nil
}

// machineIn is the step machine of agent in version v: the agent's own
// when it has hooks of its own (a copy on the runner's clock and
// pricer, made once per version and agent), else the runner's.
func (e *Runner) machineIn(v *Version, agent string) *core.Machine {
	am, ok := v.Machines[agent]
	if !ok {
		return e.Machine
	}
	key := machineKey{v, agent}
	if m, ok := e.machines.Load(key); ok {
		return m.(*core.Machine)
	}
	c := *am
	c.Clock = e.Clock
	if e.Machine.Pricer != nil {
		c.Pricer = e.Machine.Pricer
	}
	m, _ := e.machines.LoadOrStore(key, &c)
	return m.(*core.Machine)
}

type machineKey struct {
	v     *Version
	agent string
}

// machineOf is the step machine of a run (its version's, its agent's).
func (e *Runner) machineOf(ctx context.Context, cfg core.RunConfig) (*core.Machine, *Version, error) {
	v, err := e.version(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return e.machineIn(v, cfg.Agent), v, nil
}

// startVersion is the version a new run starts on: the one the request
// names (when its agent allows it), the parent's for a child run, else
// the alias's pick for the tenant and run id (the default alias when the
// request names none).
func (e *Runner) startVersion(ctx context.Context, tenant, runID string, req StartRequest) (*Version, error) {
	if req.inherited {
		return e.Versions.Load(ctx, req.Version)
	}
	if req.Version != "" && req.Alias != "" {
		return nil, fmt.Errorf("%w: name an agent version or an alias, not both", core.ErrInvalidInput)
	}
	if req.Version != "" {
		// The agent of the version new runs get decides whether a caller
		// may choose another.
		cur, err := e.aliasVersion(ctx, tenant, runID, core.DefaultAlias)
		if err != nil {
			return nil, err
		}
		if a, ok := cur.Agents.Get(req.Agent); !ok || !a.Allows(agents.OverrideAgentVersion) {
			return nil, fmt.Errorf("%w: add %q to agent %s's allow_overrides", ErrVersionNotAllowed, agents.OverrideAgentVersion, req.Agent)
		}
	}
	if req.Version != "" {
		if !core.ValidAgentVersionID(req.Version) {
			return nil, fmt.Errorf("%w %q: a version id is av_ and 16 hex digits", ErrUnknownVersion, req.Version)
		}
		v, err := e.Versions.Load(ctx, req.Version)
		if errors.Is(err, core.ErrNotFound) {
			return nil, fmt.Errorf("%w %s", ErrUnknownVersion, req.Version)
		}
		return v, err
	}
	alias := req.Alias
	if alias == "" {
		alias = core.DefaultAlias
	}
	return e.aliasVersion(ctx, tenant, runID, alias)
}

// aliasVersion loads the version alias picks for a run. Without a stored
// default alias (a runner wired without versions, or before the first
// deploy published its file), new runs get the deployment's own file.
func (e *Runner) aliasVersion(ctx context.Context, tenant, runID, alias string) (*Version, error) {
	if !core.ValidAliasName(alias) {
		return nil, fmt.Errorf("%w: alias %q", ErrUnknownVersion, alias)
	}
	a, err := e.Store.GetAgentAlias(ctx, alias)
	switch {
	case errors.Is(err, core.ErrNotFound) && alias == core.DefaultAlias:
		return e.Versions.Load(ctx, "")
	case errors.Is(err, core.ErrNotFound):
		return nil, fmt.Errorf("%w: no alias %q", ErrUnknownVersion, alias)
	case err != nil:
		return nil, err
	}
	return e.Versions.Load(ctx, a.Pick(tenant, runID))
}
