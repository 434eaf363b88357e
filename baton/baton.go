package baton

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unsafe"

	"github.com/baton-agents/baton/core"
)

// Aliases of the core types the library API uses.
type (
	// Envelope is the conversation result envelope.
	Envelope = core.Envelope
	// Message is a normalized transcript message.
	Message = core.Message
	// ToolCall is a prepared server tool call handed to a Handler.
	ToolCall = core.ToolCall
	// ToolResult is a normalized tool result.
	ToolResult = core.ToolResult
	// ModelProvider runs one model turn.
	ModelProvider = core.ModelProvider
	// ModelSpec names a run's model: provider, model id, options, and the
	// turns of the scripted provider.
	ModelSpec = core.ModelSpec
	// ScriptedTurn is one reply of the scripted provider.
	ScriptedTurn = core.ScriptedTurn
	// ToolCallRequest is a tool call proposed by a model.
	ToolCallRequest = core.ToolCallRequest
	// Event is a lifecycle event.
	Event = core.Event
	// PendingToolRequest is a client tool call the run waits on.
	PendingToolRequest = core.PendingToolRequest
	// PendingAction is an action the run waits for a decision on.
	PendingAction = core.PendingAction
	// CompactionPolicy configures conversation compaction.
	CompactionPolicy = core.CompactionPolicy
)

// ProviderScripted is the name of the scripted model provider, which
// replays ModelSpec.Turns; it is always available.
const ProviderScripted = core.ProviderScripted

// Handler executes a server tool call. Its output is JSON-friendly: an
// object with a boolean "success" is a result envelope (success, result,
// error, error_type, metadata); anything else is a successful result. A
// returned error or a panic becomes a failed result with error_type
// executor_exception.
type Handler func(ctx context.Context, call ToolCall) (any, error)

// Typed adapts a function with typed parameters: the call's parameters
// (already validated against the tool's schema) are decoded into P as
// encoding/json decodes them, and the function's R is the output. A
// decoding error is an executor_exception result. A struct of scalar
// fields whose names the parameters match exactly is filled directly;
// anything else goes through encoding/json.
func Typed[P any, R any](fn func(ctx context.Context, params P, call ToolCall) (R, error)) Handler {
	plan := flatStructOf[P]()
	return func(ctx context.Context, call ToolCall) (any, error) {
		var p P // on the stack unless decoded with encoding/json
		if plan == nil || !plan.fill(unsafe.Pointer(&p), call.Parameters) {
			b, err := core.CanonicalJSON(call.Parameters)
			if err != nil {
				return nil, err
			}
			decoded := new(P)
			if err := json.Unmarshal(b, decoded); err != nil {
				return nil, fmt.Errorf("decode parameters of %s: %w", call.ToolName, err)
			}
			p = *decoded
		}
		return fn(ctx, p, call)
	}
}

// Tool is a server tool: its declaration and its Go handler.
type Tool struct {
	// Name is namespaced, like "ability/get_weather".
	Name string
	// Source is a lowercase slug naming where the tool comes from; empty
	// means "go".
	Source string
	// Description tells the model what the tool does (required).
	Description string
	// Parameters is the JSON Schema of the parameters (an object schema);
	// calls that do not satisfy it fail without reaching the handler.
	Parameters map[string]any
	// ActionPolicy "preview" pauses each call for an approval, "forbidden"
	// refuses it, and "direct" (or empty) runs it.
	ActionPolicy string
	// Runtime holds runtime metadata such as {"duplicate_policy":
	// "repeatable"} or {"retry_safe": true}.
	Runtime map[string]any
	// Categories are the tool's categories for tool policies.
	Categories []string
	// Handler executes the calls (required).
	Handler Handler
}

func (t Tool) declaration() (core.ToolDeclaration, error) {
	m := map[string]any{"name": t.Name, "source": t.Source, "description": t.Description}
	if t.Source == "" {
		m["source"] = "go"
	}
	if t.Parameters != nil {
		m["parameters"] = t.Parameters
	}
	if t.ActionPolicy != "" {
		m["action_policy"] = t.ActionPolicy
	}
	if t.Runtime != nil {
		m["runtime"] = t.Runtime
	}
	if len(t.Categories) > 0 {
		cats := make([]any, len(t.Categories))
		for i, c := range t.Categories {
			cats[i] = c
		}
		m["categories"] = cats
	}
	if strings.HasPrefix(t.Name, "client/") {
		return core.ToolDeclaration{}, fmt.Errorf("tool %s: client/* tools are declared per run in Request.ClientTools", t.Name)
	}
	d, err := core.NormalizeServerTool(m)
	if err != nil {
		return core.ToolDeclaration{}, fmt.Errorf("tool %s: %w", t.Name, err)
	}
	if t.Handler == nil {
		return core.ToolDeclaration{}, fmt.Errorf("tool %s: a Handler is required", t.Name)
	}
	return d, nil
}

// Agent is an agent definition: what the operator's agents file holds for
// a deployment.
type Agent struct {
	// Name is the agent's slug; it is the envelope's agent and the
	// ToolCall's Agent.
	Name string
	// Model is the default model; Request.Model replaces it.
	Model ModelSpec
	// System is the system prompt.
	System string
	// Tools are the server tools.
	Tools []Tool
	// MaxTurns caps the model turns (default 8).
	MaxTurns int
	// Budgets are iteration budgets: turns, tool_calls,
	// tool_calls_<tool>, total_tokens.
	Budgets map[string]int
	// PendingTTL is how long a pending client request or approval waits
	// (default 24h).
	PendingTTL time.Duration
	// ParallelToolCalls runs the server calls of one turn concurrently and
	// requests client calls all at once.
	ParallelToolCalls bool
	// ContextBudget, when positive, trims the model's view of the
	// transcript to about this many tokens.
	ContextBudget int
	// ToolResultMaxBytes caps a tool result (default 256 KiB).
	ToolResultMaxBytes int
	// Policy holds the tool and action policies.
	Policy core.PolicyConfig
	// Compaction, when enabled, condenses a long session's older messages
	// into a summary the model sees instead, written by the agent's model
	// (or Compaction.Model) unless Runtime.Summarizer is set.
	Compaction *CompactionPolicy
}

// Request starts a run.
type Request struct {
	// Prompt is a shorthand for one user message; it is appended after
	// Messages.
	Prompt string
	// Messages are the run's new messages (at least one with Prompt).
	Messages []Message
	// ClientTools are client/* tool declarations the caller answers with
	// SubmitToolResult, as JSON-like maps {"name","description",
	// "parameters"}.
	ClientTools []map[string]any
	// Model, when set, replaces the agent's model (a per-run script, say).
	Model *ModelSpec
	// MaxTurns and Budgets, when set, replace the agent's.
	MaxTurns int
	Budgets  map[string]int
	// Metadata is copied to the envelope's request metadata.
	Metadata map[string]any
	// RunID and SessionID name the run; empty ones are minted.
	RunID     string
	SessionID string
}

// Runtime runs agents in process. Its zero value is ready to use, with
// the scripted provider, the system clock and random ids.
type Runtime struct {
	// Providers are model providers by ModelSpec.Provider name, in
	// addition to the scripted one.
	Providers map[string]ModelProvider
	// Sink observes lifecycle events as they happen.
	Sink core.EventSink
	// Clock and IDs default to the system clock and random ids.
	Clock core.Clock
	IDs   core.IDSource
	// Machine, when set, is the core machine to use (for its hooks:
	// mediators, guardrails, policy providers); its clock wins over Clock.
	Machine *core.Machine
	// Summarizer, when set, writes compaction summaries instead of a
	// model call.
	Summarizer core.Summarizer
}

// Run is a run held in memory. Its methods are not safe for concurrent
// use.
type Run struct {
	rn  *core.Runner
	run *core.Run
}

// Start starts a run of agent on a new session and drives it until it
// ends or pauses for a client tool or an approval.
func (rt *Runtime) Start(ctx context.Context, agent Agent, req Request) (*Run, error) {
	return rt.start(ctx, agent, nil, req)
}

// Continue starts a run of agent on prev's session: the model sees the
// session's transcript so far, and the envelope's messages hold it. prev
// must be finished.
func (rt *Runtime) Continue(ctx context.Context, agent Agent, prev *Run, req Request) (*Run, error) {
	if prev == nil {
		return nil, errors.New("baton: continue: no previous run")
	}
	if !prev.Done() {
		return nil, fmt.Errorf("baton: continue: the session's run %s is unfinished (%s)", prev.ID(), prev.Status())
	}
	if req.SessionID != "" && req.SessionID != prev.SessionID() {
		return nil, fmt.Errorf("baton: continue: session %s is not the previous run's session %s", req.SessionID, prev.SessionID())
	}
	req.SessionID = prev.SessionID()
	return rt.start(ctx, agent, prev.run.Transcript, req)
}

func (rt *Runtime) start(ctx context.Context, agent Agent, prior []Message, req Request) (*Run, error) {
	cfg, handlers, err := agent.config()
	if err != nil {
		return nil, err
	}
	if req.Model != nil {
		cfg.Model = *req.Model
	}
	if req.MaxTurns > 0 {
		cfg.MaxTurns = req.MaxTurns
	}
	for k, v := range req.Budgets {
		if cfg.Budgets == nil {
			cfg.Budgets = map[string]int{}
		}
		cfg.Budgets[k] = v
	}
	cfg.Metadata = req.Metadata
	msgs := append([]Message(nil), req.Messages...)
	if req.Prompt != "" {
		msgs = append(msgs, Message{Role: core.RoleUser, Content: req.Prompt})
	}
	var clientTools []any
	for _, t := range req.ClientTools {
		clientTools = append(clientTools, t)
	}
	ids := rt.IDs
	if ids == nil {
		ids = core.RandomIDs{}
	}
	if req.RunID == "" {
		req.RunID = ids.NewID("run")
	}
	if req.SessionID == "" {
		req.SessionID = ids.NewID("sess")
	}
	rn := &core.Runner{Machine: rt.machine(), Model: rt.models(), Sink: rt.Sink, Summarizer: rt.Summarizer,
		Tools: core.ToolExecutorFunc(func(ctx context.Context, call ToolCall) (any, error) {
			h, ok := handlers[call.ToolName]
			if !ok {
				return nil, fmt.Errorf("no handler for tool %s", call.ToolName)
			}
			return h(ctx, call)
		})}
	run, err := rn.Continue(ctx, prior, core.StartInput{RunID: req.RunID, SessionID: req.SessionID, Config: cfg, RequestTools: clientTools, Messages: msgs})
	if run == nil {
		return nil, fmt.Errorf("baton: start run: %w", err)
	}
	r := &Run{rn: rn, run: run}
	if err != nil {
		return r, fmt.Errorf("baton: run %s: %w", req.RunID, err)
	}
	return r, nil
}

func (a Agent) config() (core.RunConfig, map[string]Handler, error) {
	if strings.TrimSpace(a.Name) == "" {
		return core.RunConfig{}, nil, errors.New("baton: agent: a Name is required")
	}
	cfg := core.RunConfig{Agent: a.Name, Model: a.Model, System: a.System, MaxTurns: a.MaxTurns,
		PendingTTL: core.Duration(a.PendingTTL), ParallelToolCalls: a.ParallelToolCalls, ContextBudget: a.ContextBudget,
		ToolResultMaxBytes: a.ToolResultMaxBytes, Policy: a.Policy, Compaction: a.Compaction}
	if len(a.Budgets) > 0 {
		cfg.Budgets = map[string]int{}
		for k, v := range a.Budgets {
			cfg.Budgets[k] = v
		}
	}
	handlers := map[string]Handler{}
	for _, t := range a.Tools {
		d, err := t.declaration()
		if err != nil {
			return cfg, nil, fmt.Errorf("baton: agent %s: %w", a.Name, err)
		}
		if _, dup := handlers[d.Name]; dup {
			return cfg, nil, fmt.Errorf("baton: agent %s: tool %s is declared twice", a.Name, d.Name)
		}
		handlers[d.Name] = t.Handler
		cfg.Tools = append(cfg.Tools, d)
	}
	return cfg, handlers, nil
}

func (rt *Runtime) machine() *core.Machine {
	if rt.Machine != nil {
		return rt.Machine
	}
	return core.NewMachine(rt.Clock)
}

func (rt *Runtime) models() core.ModelRouter {
	r := core.ModelRouter{core.ProviderScripted: core.ScriptedModel{}}
	for name, p := range rt.Providers {
		r[name] = p
	}
	return r
}

// ID is the run's id.
func (r *Run) ID() string { return r.run.State.RunID }

// SessionID is the run's session id.
func (r *Run) SessionID() string { return r.run.State.SessionID }

// Status is the run's status: completed, max_turns_reached,
// budget_exceeded, failed, cancelled, or, while paused,
// runtime_tool_pending or approval_required.
func (r *Run) Status() string { return string(r.run.State.Status) }

// Done reports whether the run has ended (it is not paused).
func (r *Run) Done() bool { return core.IsTerminal(r.run.State.Status) }

// Envelope is the run's conversation result envelope.
func (r *Run) Envelope() Envelope { return r.run.Envelope() }

// Transcript is the session transcript, earlier runs included.
func (r *Run) Transcript() []Message { return append([]Message(nil), r.run.Transcript...) }

// Pending lists the client tool requests and the actions the run waits on.
func (r *Run) Pending() ([]PendingToolRequest, []PendingAction) { return r.run.State.Pending() }

// SubmitToolResult answers a pending client tool request with a
// successful result and drives the run on.
func (r *Run) SubmitToolResult(ctx context.Context, requestID string, result any) error {
	return r.resume(ctx, core.ClientResult{RequestID: requestID, Success: true, Result: result})
}

// SubmitToolError answers a pending client tool request with a failure
// and drives the run on.
func (r *Run) SubmitToolError(ctx context.Context, requestID, message string) error {
	return r.resume(ctx, core.ClientResult{RequestID: requestID, Success: false, Error: message})
}

// Approve accepts a pending action: the call executes and the run goes
// on.
func (r *Run) Approve(ctx context.Context, actionID, reason string) error {
	return r.resume(ctx, core.ApprovalDecision{ActionID: actionID, Decision: "accept", Reason: reason})
}

// Reject refuses a pending action: the call gets a failed result with
// error_type rejected carrying reason, and the run goes on.
func (r *Run) Reject(ctx context.Context, actionID, reason string) error {
	return r.resume(ctx, core.ApprovalDecision{ActionID: actionID, Decision: "reject", Reason: reason})
}

// Steer queues a user message for the top of the run's next iteration.
func (r *Run) Steer(ctx context.Context, content string) error {
	return r.resume(ctx, core.Steer{Content: content})
}

// Cancel ends a paused run with status cancelled; unanswered calls get
// failed cancelled results.
func (r *Run) Cancel(ctx context.Context, reason string) error {
	return r.resume(ctx, core.Cancel{Reason: reason})
}

func (r *Run) resume(ctx context.Context, in core.Input) error {
	if err := r.rn.Resume(ctx, r.run, in); err != nil {
		return fmt.Errorf("baton: run %s: %w", r.ID(), err)
	}
	return nil
}
