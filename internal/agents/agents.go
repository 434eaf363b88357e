package agents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/toolspec"
)

// Fields a request may override when an agent allows it.
const (
	OverrideModel             = "model"
	OverrideMaxTurns          = "max_turns"
	OverrideBudgets           = "budgets"
	OverrideParallelToolCalls = "parallel_tool_calls"
	// OverrideStreamTokens is not in allow_overrides: any request may turn
	// token streaming off, none may turn it on against the agent.
	OverrideStreamTokens  = "stream_tokens"
	OverrideContextBudget = "context_budget"
	// OverrideAgentVersion lets a run request name the agent version it
	// runs on (core.AgentVersion), instead of an alias's.
	OverrideAgentVersion = "agent_version"
)

var overridable = map[string]bool{OverrideMemorySubject: true, OverrideModel: true, OverrideMaxTurns: true, OverrideBudgets: true, OverrideParallelToolCalls: true, OverrideContextBudget: true, OverrideCallback: true, OverrideAgentVersion: true}

// File is the agents file. Schema is the JSON Schema an editor checks
// it with (events/schemas/agents-file.schema.json); Baton ignores it.
type File struct {
	Schema string `json:"$schema,omitempty"`
	Agents []Spec `json:"agents"`
}

// Spec is one agent as written in the file.
type Spec struct {
	Slug           string         `json:"slug"`
	Label          string         `json:"label,omitempty"`
	Model          core.ModelSpec `json:"model"`
	AllowOverrides []string       `json:"allow_overrides,omitempty"`
	System         string         `json:"system,omitempty"`
	MaxTurns       int            `json:"max_turns,omitempty"`
	// MaxDepth bounds how deep child runs nest below a run of this agent
	// through agent tools (default core.DefaultMaxDepth).
	MaxDepth int `json:"max_depth,omitempty"`
	// Handoffs are the agents a run of this agent may hand the rest of
	// the conversation to (a handoff/<agent> tool each).
	Handoffs           []string          `json:"handoffs,omitempty"`
	Budgets            core.BudgetLimits `json:"budgets,omitempty"`
	PendingTTL         string            `json:"pending_ttl,omitempty"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls,omitempty"`
	ContextBudget      int               `json:"context_budget,omitempty"`
	ToolResultMaxBytes int               `json:"tool_result_max_bytes,omitempty"`
	Tools              []map[string]any  `json:"tools,omitempty"`
	// MCPServers are remote MCP servers whose tools the agent uses as
	// mcp/<server>/<tool> (toolspec.ParseMCPServers).
	MCPServers   []any                    `json:"mcp_servers,omitempty"`
	ToolPolicy   *core.ToolPolicy         `json:"tool_policy,omitempty"`
	ActionPolicy *core.ActionPolicyConfig `json:"action_policy,omitempty"`
	Deny         []string                 `json:"deny,omitempty"`
	Categories   []string                 `json:"categories,omitempty"`
	Mode         string                   `json:"mode,omitempty"`
	Compaction   *core.CompactionPolicy   `json:"compaction,omitempty"`
	// Memory is the agent's long-term memory (memory.go).
	Memory *MemorySpec `json:"memory,omitempty"`
	// StreamTokens false turns off streaming the model's tokens to live
	// streams (default on).
	StreamTokens *bool `json:"stream_tokens,omitempty"`
	// Guardrails are the agent's input, output and tool rules (package
	// guardrails builds and checks them). An agent with output rules
	// does not stream the model's tokens: they would show a reply before
	// the output rules checked (and perhaps redacted) it.
	Guardrails *toolspec.Guardrails `json:"guardrails,omitempty"`
	// PreToolMediator and CompletionPolicy are http or lambda hooks
	// (toolspec.ParseHook; package hooks calls them).
	PreToolMediator  any `json:"pre_tool_mediator,omitempty"`
	CompletionPolicy any `json:"completion_policy,omitempty"`
	// Callback is the agent's webhook, and CallbackHosts the hosts a
	// caller's callback may name (callback.go).
	Callback      *CallbackSpec `json:"callback,omitempty"`
	CallbackHosts []string      `json:"callback_hosts,omitempty"`
	// A2A serves the agent over the A2A protocol (a2a.go).
	A2A *A2ASpec `json:"a2a,omitempty"`
}

// Agent is a validated agent.
type Agent struct {
	Spec      Spec
	Tools     []core.ToolDeclaration
	Executors map[string]toolspec.Executor // by tool name
	// MCP are the agent's MCP servers, validated; their tools are
	// discovered by the worker.
	MCP        []toolspec.MCPServer
	PendingTTL time.Duration
	// Mediator and Completion are the agent's pre_tool_mediator and
	// completion_policy hooks, nil when not configured.
	Mediator   *toolspec.Hook
	Completion *toolspec.Hook
	allowed    map[string]bool
	// callbackEvents and callbackTimeout are the callback's, validated.
	callbackEvents  []string
	callbackTimeout time.Duration
}

// Registry holds the agents by slug.
type Registry struct {
	agents map[string]*Agent
	// first is the slug of the file's first agent.
	first string
}

// Parse validates an agents file's bytes. Unknown fields are errors.
func Parse(b []byte) (*Registry, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("decode: unexpected data after the JSON object")
	}
	r := &Registry{agents: map[string]*Agent{}}
	for i, s := range f.Agents {
		a, err := build(s)
		if err != nil {
			return nil, fmt.Errorf("agents[%d] (%s): %w", i, s.Slug, err)
		}
		if _, dup := r.agents[s.Slug]; dup {
			return nil, fmt.Errorf("agents[%d]: duplicate slug %q", i, s.Slug)
		}
		r.agents[s.Slug] = a
		if i == 0 {
			r.first = s.Slug
		}
	}
	if len(r.agents) == 0 {
		return nil, fmt.Errorf("no agents defined")
	}
	for i, s := range f.Agents {
		a := r.agents[s.Slug]
		for j, to := range s.Handoffs {
			target, ok := r.agents[to]
			switch {
			case !ok:
				return nil, fmt.Errorf("agents[%d] (%s): handoffs[%d]: %q is not an agent of this file", i, s.Slug, j, to)
			case to == s.Slug:
				return nil, fmt.Errorf("agents[%d] (%s): handoffs[%d]: an agent cannot hand off to itself", i, s.Slug, j)
			case slices.Contains(s.Handoffs[:j], to):
				return nil, fmt.Errorf("agents[%d] (%s): handoffs[%d]: %q is listed twice", i, s.Slug, j, to)
			}
			a.Tools = append(a.Tools, core.HandoffTool(to, target.Spec.Label))
		}
		for _, d := range a.Tools {
			if child := d.ChildAgent(); child != "" && r.agents[child] == nil {
				return nil, fmt.Errorf("agents[%d] (%s): tool %s: executor.agent %q is not an agent of this file", i, s.Slug, d.Name, child)
			}
		}
	}
	return r, nil
}

// agentTool is the declaration of an agent tool (executor type agent):
// named agent/<anything>, source agent unless given, the default
// parameters (task, context) unless declared, and an output_schema that
// compiles.
func agentTool(m map[string]any, ex toolspec.Executor) (core.ToolDeclaration, error) {
	m = maps.Clone(m)
	name, _ := m["name"].(string)
	if !strings.HasPrefix(name, core.AgentToolPrefix) {
		return core.ToolDeclaration{}, fmt.Errorf("an agent tool's name starts with %s (e.g. %s%s)", core.AgentToolPrefix, core.AgentToolPrefix, ex.Agent)
	}
	if _, ok := m["source"]; !ok {
		m["source"] = core.ExecutorAgent
	}
	if _, ok := m["parameters"]; !ok {
		m["parameters"] = core.DefaultAgentToolParameters()
	}
	schema, hasSchema := m[core.DeclOutputSchema]
	delete(m, core.DeclOutputSchema)
	d, err := core.NormalizeServerTool(m)
	if err != nil {
		return d, err
	}
	d.Executor = core.ExecutorAgent
	if d.Extensions == nil {
		d.Extensions = map[string]any{}
	}
	d.Extensions[core.DeclAgent] = ex.Agent
	if hasSchema {
		sm, ok := schema.(map[string]any)
		if !ok {
			return d, fmt.Errorf("output_schema must be a JSON Schema object")
		}
		if err := core.CheckSchema(sm); err != nil {
			return d, fmt.Errorf("output_schema: %w", err)
		}
		d.Extensions[core.DeclOutputSchema] = sm
	}
	return d, nil
}

// remoteAgentTool fills what a remote agent tool (executor type a2a)
// leaves out: source a2a, and the default parameters (one message).
func remoteAgentTool(m map[string]any) map[string]any {
	m = maps.Clone(m)
	if _, ok := m["source"]; !ok {
		m["source"] = core.ExecutorRemoteAgent
	}
	if _, ok := m["parameters"]; !ok {
		m["parameters"] = core.DefaultRemoteAgentParameters()
	}
	return m
}

func build(s Spec) (*Agent, error) {
	if strings.TrimSpace(s.Slug) == "" {
		return nil, fmt.Errorf("slug is required")
	}
	if s.Model.Provider == "" {
		return nil, fmt.Errorf("model.provider is required")
	}
	if s.StreamTokens != nil && *s.StreamTokens && s.Guardrails.HasOutput() {
		return nil, fmt.Errorf("stream_tokens: true cannot go with output guardrails, which check a reply before anyone sees it: remove stream_tokens (such an agent never streams tokens) or the output rules")
	}
	a := &Agent{Spec: s, Executors: map[string]toolspec.Executor{}, allowed: map[string]bool{}, PendingTTL: core.DefaultPendingTTL}
	for _, o := range s.AllowOverrides {
		if !overridable[o] {
			return nil, fmt.Errorf("allow_overrides: %q cannot be overridden (want model, max_turns, budgets, parallel_tool_calls, context_budget, callback, agent_version or memory_subject)", o)
		}
		a.allowed[o] = true
	}
	if s.PendingTTL != "" {
		d, err := time.ParseDuration(s.PendingTTL)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("pending_ttl: want a positive Go duration like \"24h\", got %q", s.PendingTTL)
		}
		a.PendingTTL = d
	}
	for i, raw := range s.Tools {
		g, err := core.ToJSONValue(raw)
		if err != nil {
			return nil, fmt.Errorf("tools[%d]: %w", i, err)
		}
		m := g.(map[string]any)
		name, _ := m["name"].(string)
		if strings.HasPrefix(name, "client/") {
			return nil, fmt.Errorf("tools[%d]: %s: client tools are declared by API callers, not in the agents file", i, name)
		}
		if strings.HasPrefix(name, core.HandoffToolPrefix) {
			return nil, fmt.Errorf("tools[%d]: %s: handoff/ names are the tools of handoffs, made from the agents they name", i, name)
		}
		if strings.HasPrefix(name, toolspec.MCPToolPrefix) {
			return nil, fmt.Errorf("tools[%d]: %s: mcp/ names are the tools of mcp_servers, discovered from the servers", i, name)
		}
		ex, err := toolspec.Parse(m["executor"])
		if err != nil {
			return nil, fmt.Errorf("tools[%d] (%s): %w", i, name, err)
		}
		if ex.Type == toolspec.TypeAgent {
			d, err := agentTool(m, ex)
			if err != nil {
				return nil, fmt.Errorf("tools[%d] (%s): %w", i, name, err)
			}
			a.Tools = append(a.Tools, d)
			continue
		}
		if _, ok := m[core.DeclOutputSchema]; ok {
			return nil, fmt.Errorf("tools[%d] (%s): output_schema is for agent tools (executor type agent)", i, name)
		}
		if ex.Type == toolspec.TypeA2A {
			m = remoteAgentTool(m)
		}
		d, err := core.NormalizeServerTool(m)
		if err != nil {
			return nil, fmt.Errorf("tools[%d]: %w", i, err)
		}
		if ex.Type == toolspec.TypeA2A {
			d.Executor = core.ExecutorRemoteAgent
		}
		a.Tools = append(a.Tools, d)
		a.Executors[d.Name] = ex
	}
	if s.MaxDepth < 0 {
		return nil, fmt.Errorf("max_depth must be a positive integer")
	}
	var err error
	if a.MCP, err = toolspec.ParseMCPServers(s.MCPServers); err != nil {
		return nil, err
	}
	if err := a.parseHooks(); err != nil {
		return nil, err
	}
	if err := a.parseA2A(); err != nil {
		return nil, err
	}
	if err := a.parseCallback(); err != nil {
		return nil, err
	}
	if err := a.parseMemory(); err != nil {
		return nil, err
	}
	cfg := a.baseConfig()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return a, nil
}

// parseHooks validates the agent's pre_tool_mediator (on_error reject,
// the default, or proceed) and completion_policy (on_error continue).
func (a *Agent) parseHooks() error {
	for _, h := range []struct {
		field   string
		raw     any
		dst     **toolspec.Hook
		onError []string
	}{
		{"pre_tool_mediator", a.Spec.PreToolMediator, &a.Mediator, []string{toolspec.OnErrorReject, toolspec.OnErrorProceed}},
		{"completion_policy", a.Spec.CompletionPolicy, &a.Completion, []string{toolspec.OnErrorContinue}},
	} {
		if h.raw == nil {
			continue
		}
		hk, err := toolspec.ParseHook(h.raw, h.onError...)
		if err != nil {
			return fmt.Errorf("%s: %w", h.field, err)
		}
		*h.dst = &hk
	}
	return nil
}

// CheckCompactionModels checks, once the deployment's enabled model
// providers are known, every agent's compaction.model and
// memory.extraction.model: its provider must
// be enabled (an unknown one never is), and a provider other than
// scripted needs a model id. Otherwise every summary would fail at run
// time; the error names the agent and the field.
func (r *Registry) CheckCompactionModels(enabled []string) error {
	for _, slug := range r.Slugs() {
		s := r.agents[slug].Spec
		models := map[string]*core.ModelSpec{}
		if s.Compaction != nil {
			models["compaction"] = s.Compaction.Model
		}
		if s.Memory != nil && s.Memory.Extraction != nil {
			models["memory.extraction"] = s.Memory.Extraction.Model
		}
		for _, field := range []string{"compaction", "memory.extraction"} {
			m := models[field]
			if m == nil {
				continue
			}
			if !slices.Contains(enabled, m.Provider) {
				return fmt.Errorf("agent %s: %s.model.provider %q is not enabled in this deployment (enabled: %s)", slug, field, m.Provider, strings.Join(enabled, ", "))
			}
			if m.Provider != core.ProviderScripted && strings.TrimSpace(m.Model) == "" {
				return fmt.Errorf("agent %s: %s.model.model is required: provider %s needs a model id", slug, field, m.Provider)
			}
		}
	}
	return nil
}

// Get returns an agent by slug.
func (r *Registry) Get(slug string) (*Agent, bool) {
	a, ok := r.agents[slug]
	return a, ok
}

// Executors binds every agent's server tools to their executors, for
// executors.NewRouter.
func (r *Registry) Executors() toolspec.Tools {
	out := toolspec.Tools{}
	for slug, a := range r.agents {
		m := make(map[string]toolspec.Executor, len(a.Executors))
		for name, ex := range a.Executors {
			m[name] = ex
		}
		out[slug] = m
	}
	return out
}

// MCPServers lists every agent's MCP servers by agent slug (agents
// without any are left out).
func (r *Registry) MCPServers() map[string][]toolspec.MCPServer {
	out := map[string][]toolspec.MCPServer{}
	for slug, a := range r.agents {
		if len(a.MCP) > 0 {
			out[slug] = a.MCP
		}
	}
	return out
}

// First returns the first agent of the file.
func (r *Registry) First() *Agent { return r.agents[r.first] }

// Slugs lists the agents.
func (r *Registry) Slugs() []string {
	out := make([]string, 0, len(r.agents))
	for s := range r.agents {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Allows reports whether a request may set field.
func (a *Agent) Allows(field string) bool { return a.allowed[field] }

func (a *Agent) baseConfig() core.RunConfig {
	s := a.Spec
	cfg := core.RunConfig{
		Agent: s.Slug, Model: s.Model, System: s.System, Tools: append([]core.ToolDeclaration(nil), a.Tools...),
		MaxTurns: s.MaxTurns, MaxDepth: s.MaxDepth, Budgets: map[string]int{}, PendingTTL: core.Duration(a.PendingTTL),
		ParallelToolCalls: s.ParallelToolCalls, ContextBudget: s.ContextBudget, ToolResultMaxBytes: s.ToolResultMaxBytes,
		Policy:     core.PolicyConfig{Mode: s.Mode, ToolPolicy: s.ToolPolicy, ActionPolicy: s.ActionPolicy, Deny: s.Deny, Categories: s.Categories},
		Compaction: s.Compaction, NoTokenStream: s.StreamTokens != nil && !*s.StreamTokens || s.Guardrails.HasOutput(),
		Callback: a.baseCallback(), Memory: a.memoryPolicy(""),
	}
	s.Budgets.ApplyTo(&cfg)
	return cfg
}

// Overrides are the request fields that may replace agent defaults.
type Overrides struct {
	Model             *core.ModelSpec
	MaxTurns          *int
	Budgets           core.BudgetLimits
	ParallelToolCalls *bool
	ContextBudget     *int
	// StreamTokens false turns token streaming off for the run; true
	// keeps the agent's setting and is refused when the agent turns it
	// off. Any caller may set it: it never changes the run's outcome.
	StreamTokens *bool
	// Callback replaces the agent's callback (callback.go).
	Callback *CallbackRequest
	// MemorySubject names the end user whose memories the run uses
	// (memory.go); the runner checks the caller may name it.
	MemorySubject *string
}

// OverrideError names a field the agent does not let callers set, and
// why when the agents file's allow_overrides cannot change it.
type OverrideError struct {
	Field  string
	Reason string
}

func (e *OverrideError) Error() string {
	if e.Reason != "" {
		return e.Reason
	}
	return fmt.Sprintf("the agent does not let a request set %q (the agents file can allow it: add %q to the agent's allow_overrides)", e.Field, e.Field)
}

// RunConfig is the agent's configuration with a request's overrides.
// Budgets given by the request replace the agent's budget of the same name.
func (a *Agent) RunConfig(o Overrides) (core.RunConfig, error) {
	cfg := a.baseConfig()
	// set applies one given override, or records the first one the agent
	// does not allow and skips the rest.
	var err error
	set := func(field string, given bool, apply func()) {
		if err != nil || !given {
			return
		}
		if !a.Allows(field) {
			err = &OverrideError{Field: field}
			return
		}
		apply()
	}
	set(OverrideModel, o.Model != nil, func() { cfg.Model = *o.Model })
	set(OverrideMaxTurns, o.MaxTurns != nil, func() { cfg.MaxTurns = *o.MaxTurns })
	set(OverrideBudgets, o.Budgets != nil, func() { o.Budgets.ApplyTo(&cfg) })
	set(OverrideParallelToolCalls, o.ParallelToolCalls != nil, func() { cfg.ParallelToolCalls = *o.ParallelToolCalls })
	set(OverrideContextBudget, o.ContextBudget != nil, func() { cfg.ContextBudget = *o.ContextBudget })
	set(OverrideMemorySubject, o.MemorySubject != nil, func() { cfg.Memory = a.memoryPolicy(*o.MemorySubject) })
	if err == nil && o.StreamTokens != nil {
		if *o.StreamTokens && cfg.NoTokenStream {
			err = &OverrideError{Field: OverrideStreamTokens, Reason: fmt.Sprintf("agent %s does not stream tokens (its agents file sets stream_tokens: false or output guardrails, which check a reply before anyone sees it): a request may turn streaming off, never on", a.Spec.Slug)}
		}
		cfg.NoTokenStream = !*o.StreamTokens
	}
	if err == nil && o.Callback != nil {
		cfg.Callback, err = a.callerCallback(o.Callback)
	}
	if err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}
