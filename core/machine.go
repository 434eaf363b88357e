package core

import (
	"context"
	"strings"
)

// StepKind is the kind of a step. Its values are sent on the step queue
// as they are.
type StepKind string

// Step kinds.
const (
	StepModelTurn StepKind = "model_turn"
	StepToolCall  StepKind = "tool_call"
)

// StepFormat is the wire version of a step message, sent as Step.Format.
const StepFormat = 1

// Step is a unit of work the machine schedules: one model turn or one tool
// call. It carries references only; the state it needs is in the store.
type Step struct {
	Kind   StepKind `json:"kind"`
	Format int      `json:"v"`
	RunID  string   `json:"run_id"`
	Seq    int64    `json:"seq"`
	CallID string   `json:"call_id,omitempty"`
	// Spent carries the AWS requests of the commit that scheduled the
	// step, which the step counts into the run's cost.
	Spent *Resources `json:"spent,omitempty"`
	// Trace is the run's W3C trace context (traceparent), so the step's
	// span joins the run's trace; core never reads it.
	Trace string `json:"trace,omitempty"`
}

// Output is what one transition produces. Messages carry their Seq;
// events carry theirs. Callers persist all of it atomically (the state is
// conditioned on its previous Version) and then schedule Next.
type Output struct {
	State       RunState
	Messages    []Message
	Events      []Event
	ToolResults []ToolExecutionResult
	Audit       []AuditEvent
	Next        []Step
}

// Machine is the deterministic agent-loop step machine. Its fields are
// configuration and product hooks; it holds no per-run state and is safe
// for concurrent use.
type Machine struct {
	Clock Clock
	// PreToolMediator, when set, decides on each call just before it would
	// execute (or pause for a client).
	PreToolMediator PreToolMediator
	// CompletionPolicy, when set, is consulted after each mediated result.
	CompletionPolicy CompletionPolicy
	// Guardrails are the input, output and tool hooks of §13.4.
	Guardrails Guardrails
	// ToolAccess, ToolPolicyProviders, ActionPolicyProviders and
	// ActionPolicyFilter are the host hooks of tool visibility and action
	// policy resolution.
	ToolAccess            ToolAccessChecker
	ToolPolicyProviders   []ToolPolicyProvider
	ActionPolicyProviders []ActionPolicyProvider
	ActionPolicyFilter    ActionPolicyFilter
	// Pricer, when set, prices each run's model calls and the AWS
	// requests its steps count (RunState.Cost) and so enables the
	// cost_usd budget.
	Pricer Pricer
}

// NewMachine returns a machine reading time from clock.
func NewMachine(clock Clock) *Machine {
	if clock == nil {
		clock = SystemClock{}
	}
	return &Machine{Clock: clock}
}

// StartInput starts a run.
type StartInput struct {
	RunID     string
	SessionID string
	// Config's Tools are the operator's normalized server tools.
	Config RunConfig
	// RequestTools are caller declarations, normalized here; invalid ones
	// are dropped with a tool_declarations_rejected event.
	RequestTools []any
	// Messages are this run's new messages, already normalized.
	Messages []Message
	// FirstSeq is the session's next message sequence number.
	FirstSeq int64
	// Edited says a fork's (Config.ForkedFrom) message at the fork point
	// was replaced. A fork may start without messages (its source's
	// assistant message is asked again) or with an assistant message
	// (an edited answer, which completes it at once).
	Edited bool
}

// Start creates a run: its state, its first messages and its first step.
func (m *Machine) Start(ctx context.Context, in StartInput) (Output, error) {
	if strings.TrimSpace(in.RunID) == "" || strings.TrimSpace(in.SessionID) == "" {
		return Output{}, invalid("run id and session id are required")
	}
	fork := in.Config.ForkedFrom
	if len(in.Messages) == 0 && fork == nil {
		return Output{}, invalid("messages: at least one message is required")
	}
	if fork != nil && (!ValidForkTools(fork.Tools) || fork.RunID == "" || fork.Seq < 1) {
		return Output{}, invalid("forked_from: a run id, a sequence number and a tools mode (reuse, replay or live) are required")
	}
	for i, msg := range in.Messages {
		if _, err := normalizeMessage(msg); err != nil {
			return Output{}, invalid("messages[%d]: %v", i, err)
		}
	}
	cfg := in.Config.withDefaults()
	cfg.Tools = append([]ToolDeclaration(nil), cfg.Tools...)
	for i := range cfg.Tools {
		cfg.Tools[i].compiled = &compiledSchema{}
	}
	accepted, rejected := NormalizeRequestTools(in.RequestTools)
	for _, d := range accepted {
		if _, dup := (&RunState{Config: cfg}).Tool(d.Name); dup {
			rejected = append(rejected, RejectedDeclaration{Name: d.Name, Reason: RequestToolPrefix + ": a tool with this name is already declared"})
			continue
		}
		d.compiled = &compiledSchema{}
		cfg.Tools = append(cfg.Tools, d)
	}
	if err := cfg.Validate(); err != nil {
		return Output{}, err
	}
	if err := cfg.Principal.Validate(); err != nil {
		return Output{}, err
	}
	cfg.Principal = cfg.Principal.normalized()
	// Caller-declared tools are the runtime's explicit opt-in.
	for _, d := range accepted {
		cfg.Policy.RuntimeTools = append(cfg.Policy.RuntimeTools, d.Name)
	}
	visible, hidden := m.ResolveVisibleTools(ctx, PolicyContext{RunID: in.RunID, Agent: cfg.Agent, Mode: cfg.Policy.mode(), Principal: cfg.Principal}, cfg.Tools, cfg.Policy)
	cfg.Visible = visible
	if cfg.Visible == nil {
		cfg.Visible = []string{}
	}
	first := in.FirstSeq
	if first < 1 {
		first = 1
	}
	now := m.Clock.Now()
	st := RunState{
		Format: StateFormat, RunID: in.RunID, SessionID: in.SessionID, Status: StatusQueued,
		Config: cfg, FirstMsgSeq: first, NextMsgSeq: first, NextEventSeq: 1,
		Budgets:         budgetsFrom(cfg.Budgets, cfg.CostBudgetUSD),
		Usage:           newUsage(),
		RequestMetadata: map[string]any{},
		CreatedAt:       now, UpdatedAt: now,
	}
	t := &transition{m: m, st: &st, now: now, out: &Output{}}
	if m.Pricer != nil {
		st.Cost = &RunCost{Currency: "USD"}
		t.countSpent(ctx)
	} else if cfg.CostBudgetUSD > 0 {
		return Output{}, invalid("budget %q needs a price table, and this runtime has none", BudgetCostUSD)
	}
	t.emit(EventRunStarted, &RunStartedData{Agent: cfg.Agent, AgentVersion: cfg.AgentVersion, MaxTurns: cfg.MaxTurns, Tools: nonNil(cfg.Visible),
		ParallelToolCalls: cfg.ParallelToolCalls})
	if fork != nil {
		t.emit(EventRunForked, &RunForkedData{ForkedFrom: *fork, Edited: in.Edited})
	}
	if len(hidden) > 0 {
		t.emit(EventToolPolicyResolved, &ToolPolicyResolvedData{Visible: nonNil(cfg.Visible),
			Hidden: nonNil(hidden)})
	}
	if len(rejected) > 0 {
		t.emit(EventToolDeclarationsRejected, &ToolDeclarationsRejectedData{RejectedCount: len(rejected), AcceptedCount: len(accepted),
			Rejected: rejected})
		if len(cfg.Tools) == 0 {
			t.emit(EventToolMediationDisabled, &ReasonData{Reason: "all_declarations_rejected"})
		}
	}
	for _, msg := range in.Messages {
		if msg.Role == RoleUser && st.Title == "" {
			st.Title = truncateRunes(strings.Join(strings.Fields(msg.Content), " "), TitleRunes)
		}
		t.appendMessage(msg)
	}
	if n := len(in.Messages); fork != nil && n > 0 && in.Messages[n-1].Role == RoleAssistant {
		// A fork at an assistant message with its answer given: the
		// answer ends the run.
		t.finish(StatusCompleted)
	} else {
		st.ModelStep = t.schedule(StepModelTurn, "")
	}
	st.Version = 1
	st.visible = st.resolveVisibleTools()
	t.out.State = st
	return *t.out, nil
}
