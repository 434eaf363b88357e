package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Step kinds and the wire version of a step message.
const (
	StepModelTurn = "model_turn"
	StepToolCall  = "tool_call"
	StepVersion   = 1
)

// Step is a unit of work the machine schedules: one model turn or one tool
// call. It carries references only; the state it needs is in the store.
type Step struct {
	Kind   string `json:"kind"`
	V      int    `json:"v"`
	RunID  string `json:"run_id"`
	Seq    int64  `json:"seq"`
	CallID string `json:"call_id,omitempty"`
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
}

// NewMachine returns a machine reading time from clock.
func NewMachine(clock Clock) *Machine {
	if clock == nil {
		clock = SystemClock{}
	}
	return &Machine{Clock: clock}
}

// PreToolMediator is the pre_tool_mediator hook.
type PreToolMediator func(ctx context.Context, mc MediationContext) MediatorDecision

// MediationContext is what the pre-tool mediator sees.
type MediationContext struct {
	RunID       string
	Turn        int
	ToolName    string
	ToolCallID  string
	Parameters  map[string]any
	Declaration ToolDeclaration
	Principal   *Principal
	Messages    []Message
	// PriorMediated holds the results already recorded in this turn.
	PriorMediated []ToolResult
}

// Mediator actions.
const (
	MediatorProceed       = "proceed"
	MediatorReject        = "reject"
	MediatorReplaceResult = "replace_result"
)

// MediatorDecision is the pre-tool mediator's answer.
type MediatorDecision struct {
	Action   string
	Error    string
	Metadata map[string]any
	// Result is the replacement result of replace_result (an envelope with
	// "success", or a bare value taken as a success).
	Result any
	// Complete stops the loop after this call's result is appended.
	Complete bool
}

// CompletionPolicy is consulted after each mediated tool result.
type CompletionPolicy func(ctx context.Context, cc CompletionContext) CompletionDecision

// CompletionContext is what the completion policy sees.
type CompletionContext struct {
	RunID      string
	Turn       int
	ToolName   string
	ToolCallID string
	Result     ToolResult
}

// CompletionDecision: Complete stops the loop after the current turn; an
// incomplete decision with a Message queues it as a user continuation
// message.
type CompletionDecision struct {
	Complete bool
	Message  string
	Context  map[string]any
}

// QueuedMessage is a user message waiting for the top of the next
// iteration (steering or a completion-policy continuation).
type QueuedMessage struct {
	Content string `json:"content"`
	Source  string `json:"source"`
}

// ---- inputs ----

// Input is one input to Apply.
type Input interface{ isInput() }

// ModelReplied is the outcome of a model_turn step's model call.
type ModelReplied struct {
	Step  Step
	Reply ModelReply
	Err   error
}

// ToolExecuted is the outcome of a tool_call step's execution.
type ToolExecuted struct {
	Step   Step
	Output any
	Err    error
}

// ToolDecided is a tool_call step resolved by mediation without
// execution: a synthetic result or a pause.
type ToolDecided struct {
	Step     Step
	Decision Decision
}

// Decision kinds of ToolDecided.
const (
	DecideResult        = "result"
	DecideAwaitClient   = "await_client"
	DecideAwaitApproval = "await_approval"
)

// Decision is a mediation outcome that needs no execution.
type Decision struct {
	Kind     string
	Result   ToolResult
	Complete bool
	// Duplicate marks a duplicate-call correction.
	Duplicate bool
}

// ClientResult submits a client tool's result.
type ClientResult struct {
	RequestID string
	Success   bool
	Result    any
	Error     string
}

// ApprovalDecision accepts or rejects a pending action.
type ApprovalDecision struct {
	ActionID string
	Decision string // "accept" or "reject"
	Reason   string
}

// Expire expires every pending request and action whose time has come.
type Expire struct{}

func (ModelReplied) isInput()     {}
func (ToolExecuted) isInput()     {}
func (ToolDecided) isInput()      {}
func (ClientResult) isInput()     {}
func (ApprovalDecision) isInput() {}
func (Expire) isInput()           {}

// ---- start ----

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
}

// Start creates a run: its state, its first messages and its first step.
func (m *Machine) Start(ctx context.Context, in StartInput) (Output, error) {
	if strings.TrimSpace(in.RunID) == "" || strings.TrimSpace(in.SessionID) == "" {
		return Output{}, invalid("run id and session id are required")
	}
	if len(in.Messages) == 0 {
		return Output{}, invalid("messages: at least one message is required")
	}
	for i, msg := range in.Messages {
		if _, err := normalizeMessage(msg); err != nil {
			return Output{}, invalid("messages[%d]: %v", i, err)
		}
	}
	cfg := in.Config.withDefaults()
	cfg.Tools = append([]ToolDeclaration(nil), cfg.Tools...)
	accepted, rejected := NormalizeRequestTools(in.RequestTools)
	for _, d := range accepted {
		if _, dup := (&RunState{Config: cfg}).Tool(d.Name); dup {
			rejected = append(rejected, RejectedDeclaration{Name: d.Name, Reason: RequestToolPrefix + ": a tool with this name is already declared"})
			continue
		}
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
		V: StateVersion, RunID: in.RunID, SessionID: in.SessionID, Status: StatusQueued,
		Config: cfg, FirstMsgSeq: first, NextMsgSeq: first, NextEventSeq: 1,
		Budgets:         budgetsFrom(cfg.Budgets),
		Usage:           map[string]any{"prompt_tokens": json.Number("0"), "completion_tokens": json.Number("0"), "total_tokens": json.Number("0")},
		RequestMetadata: map[string]any{},
		CreatedAt:       now, UpdatedAt: now,
	}
	t := &tx{m: m, ctx: ctx, st: &st, now: now, out: &Output{}}
	t.emit(EventRunStarted, map[string]any{
		"agent": cfg.Agent, "max_turns": cfg.MaxTurns, "tools": stringsToAny(cfg.Visible),
		"parallel_tool_calls": cfg.ParallelToolCalls,
	})
	if len(hidden) > 0 {
		h := make([]any, len(hidden))
		for i, x := range hidden {
			h[i] = map[string]any{"name": x.Name, "reason": x.Reason}
		}
		t.emit(EventToolPolicyResolved, map[string]any{"visible": stringsToAny(cfg.Visible), "hidden": h})
	}
	if len(rejected) > 0 {
		rj := make([]any, len(rejected))
		for i, r := range rejected {
			rj[i] = map[string]any{"name": r.Name, "reason": r.Reason}
		}
		t.emit(EventToolDeclarationsRejected, map[string]any{
			"rejected": rj, "rejected_count": len(rejected), "accepted_count": len(accepted),
		})
		if len(cfg.Tools) == 0 {
			t.emit(EventToolMediationDisabled, map[string]any{"reason": "all_declarations_rejected"})
		}
	}
	for _, msg := range in.Messages {
		t.appendMessage(msg)
	}
	st.ModelStep = t.schedule(StepModelTurn, "")
	st.Version = 1
	t.out.State = st
	return *t.out, nil
}

func stringsToAny(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// ---- plan ----

// Plan kinds.
const (
	PlanSkip    = "skip"    // the step is stale or its run finished: acknowledge and drop it
	PlanModel   = "model"   // call the model with Model, then Apply ModelReplied
	PlanTool    = "tool"    // execute Tool, then Apply ToolExecuted
	PlanApply   = "apply"   // no I/O: Apply Input directly
	PlanCompact = "compact" // summarize Compaction with the Summarizer, then Apply Compacted
)

// Plan is the I/O a step needs.
type Plan struct {
	Kind       string
	Reason     string
	Model      *ModelRequest
	Tool       *ToolCall
	Input      Input
	Compaction *CompactionRequest
}

// Plan tells the runner what a scheduled step needs. It never changes st.
// transcript is the session transcript in sequence order.
func (m *Machine) Plan(ctx context.Context, st RunState, transcript []Message, step Step) (Plan, error) {
	if step.RunID != st.RunID {
		return Plan{}, invalid("step for run %q applied to run %q", step.RunID, st.RunID)
	}
	if IsTerminal(st.Status) {
		return Plan{Kind: PlanSkip, Reason: "run is finished (" + st.Status + ")"}, nil
	}
	switch step.Kind {
	case StepModelTurn:
		if step.Seq != st.ModelStep || st.ModelStep == 0 {
			return Plan{Kind: PlanSkip, Reason: fmt.Sprintf("stale model_turn step %d", step.Seq)}, nil
		}
		if p := st.Config.Compaction; p.active() && st.CompactTurn != st.Turn+1 {
			if compact, through, retained, ok := compactionPlan(p, compactedView(transcript)); ok {
				return Plan{Kind: PlanCompact, Compaction: &CompactionRequest{RunID: st.RunID, Messages: compact, Through: through, Retained: retained}}, nil
			}
		}
		view, trim := st.modelView(transcript)
		if g := m.Guardrails.Input; g != nil {
			if res := checkGuardrail(func() GuardrailResult { return g(ctx, view) }); !res.Allowed {
				return Plan{Kind: PlanApply, Input: GuardrailDenied{Step: step, Kind: "input", Reason: res.Reason}}, nil
			}
		}
		return Plan{Kind: PlanModel, Model: &ModelRequest{
			RunID: st.RunID, SessionID: st.SessionID, Turn: st.Turn + 1, Model: st.Config.Model,
			System: st.Config.System, Messages: view, Tools: st.visibleTools(),
			ParallelToolCalls: st.Config.ParallelToolCalls, Trim: trim,
		}}, nil
	case StepToolCall:
		_, c := st.call(step.CallID)
		if c == nil || c.StepSeq != step.Seq || (c.Status != CallPending && c.Status != CallApproved) {
			return Plan{Kind: PlanSkip, Reason: fmt.Sprintf("stale tool_call step %d", step.Seq)}, nil
		}
		return m.mediate(ctx, &st, transcript, step, c), nil
	default:
		return Plan{}, invalid("unknown step kind %q", step.Kind)
	}
}

// mediate decides one call: find the declaration, prevent duplicates,
// validate parameters, resolve the action policy, consult the pre-tool
// mediator, and either pause, answer synthetically or execute.
func (m *Machine) mediate(ctx context.Context, st *RunState, transcript []Message, step Step, c *CallState) Plan {
	decided := func(d Decision) Plan {
		return Plan{Kind: PlanApply, Input: ToolDecided{Step: step, Decision: d}}
	}
	fail := func(errType, msg string, meta map[string]any) Plan {
		return decided(Decision{Kind: DecideResult, Result: ToolResult{Success: false, ToolName: c.Name, Error: msg, ErrorType: errType, Metadata: meta}})
	}
	decl, ok := st.Tool(c.Name)
	if ok && set(st.Config.Policy.Deny)[c.Name] {
		return fail(ErrTypeForbidden, fmt.Sprintf("Tool '%s' is denied by the runtime policy", c.Name), nil)
	}
	if !ok || !st.isVisible(c.Name) {
		return fail(ErrTypeToolNotFound, fmt.Sprintf("Tool '%s' not found", c.Name), nil)
	}
	if !c.Approved {
		if !decl.Repeatable() {
			if turn, dup := findAnsweredDuplicate(st, transcript, c); dup {
				return decided(Decision{Kind: DecideResult, Duplicate: true, Result: ToolResult{
					Success: false, ToolName: c.Name, ErrorType: ErrTypeDuplicateToolCall,
					Error: fmt.Sprintf("Duplicate tool call: '%s' was already called with these exact parameters in this run (turn %d) and its result is above. Do not call it again with the same parameters; use that result, or change the parameters if you need something different.", c.Name, turn),
				}})
			}
		}
		prob, err := validateParameters(decl.Parameters, c.Parameters)
		if err != nil {
			return fail(ErrTypeInvalidParameters, fmt.Sprintf("Tool '%s' has an unusable parameter schema: %v", c.Name, err), nil)
		}
		if prob != nil && len(prob.Missing) > 0 {
			missing := make([]any, len(prob.Missing))
			for i, s := range prob.Missing {
				missing[i] = s
			}
			return fail(ErrTypeMissingParameters, fmt.Sprintf("Tool '%s' is missing required parameters: %s", c.Name, strings.Join(prob.Missing, ", ")), map[string]any{"missing_parameters": missing})
		}
		if prob != nil {
			return fail(ErrTypeInvalidParameters, fmt.Sprintf("Tool '%s' parameters are invalid: %s", c.Name, prob.Detail), nil)
		}
		if g := m.Guardrails.Tool; g != nil {
			if res := checkGuardrail(func() GuardrailResult { return g(ctx, c.Name, cloneObject(c.Parameters)) }); !res.Allowed {
				return fail(ErrTypeGuardrailDenied, "Tool denied by guardrail: "+res.Reason, nil)
			}
		}
		policy, level := m.ResolveActionPolicy(ctx, st.policyContext(), decl, st.Config.Policy)
		switch policy {
		case ActionForbidden:
			return fail(ErrTypeForbidden, fmt.Sprintf("Tool '%s' is forbidden by the action policy (%s)", c.Name, level), map[string]any{"action_policy_level": level})
		case ActionPreview:
			return decided(Decision{Kind: DecideAwaitApproval})
		}
	}
	complete := false
	if m.PreToolMediator != nil {
		var prior []ToolResult
		for _, pc := range st.Calls {
			if pc.Result != nil {
				prior = append(prior, *pc.Result)
			}
		}
		d := callMediator(ctx, m.PreToolMediator, MediationContext{
			RunID: st.RunID, Turn: st.Turn, ToolName: c.Name, ToolCallID: c.ID,
			Parameters: cloneObject(c.Parameters), Declaration: decl, Principal: st.Config.Principal, Messages: transcript, PriorMediated: prior,
		})
		switch d.Action {
		case "", MediatorProceed:
			complete = d.Complete
		case MediatorReject:
			msg := d.Error
			if msg == "" {
				msg = fmt.Sprintf("Tool call '%s' rejected by the pre-tool mediator", c.Name)
			}
			et, _ := d.Metadata[MetaErrorType].(string)
			if et == "" {
				et = ErrTypeMediatorRejected
			}
			return decided(Decision{Kind: DecideResult, Complete: d.Complete, Result: ToolResult{
				Success: false, ToolName: c.Name, Error: msg, ErrorType: et, Metadata: cloneObject(d.Metadata),
			}})
		case MediatorReplaceResult:
			res := NormalizeToolOutput(decl, d.Result, nil)
			return decided(Decision{Kind: DecideResult, Complete: d.Complete, Result: res})
		default:
			return fail(ErrTypeMediatorRejected, fmt.Sprintf("pre-tool mediator returned unknown action %q", d.Action), nil)
		}
	}
	if decl.IsClient() {
		return decided(Decision{Kind: DecideAwaitClient, Complete: complete})
	}
	return Plan{Kind: PlanTool, Tool: &ToolCall{
		RunID: st.RunID, SessionID: st.SessionID, Agent: st.Config.Agent, Turn: st.Turn, ToolCallID: c.ID, ToolName: c.Name,
		Parameters: cloneObject(c.Parameters), IdempotencyKey: IdempotencyKey(st.RunID, c.ID), Declaration: decl,
		Principal: st.Config.Principal,
	}}
}

// IdempotencyKey is the key a server tool execution carries.
func IdempotencyKey(runID, toolCallID string) string { return runID + ":" + toolCallID }

func callMediator(ctx context.Context, f PreToolMediator, mc MediationContext) (d MediatorDecision) {
	defer func() {
		if r := recover(); r != nil {
			d = MediatorDecision{Action: MediatorReject, Error: fmt.Sprintf("pre-tool mediator panicked: %v", r)}
		}
	}()
	return f(ctx, mc)
}

// findAnsweredDuplicate looks in this run's transcript for an earlier call
// to the same tool with the same canonical parameters that has a result.
func findAnsweredDuplicate(st *RunState, transcript []Message, c *CallState) (int, bool) {
	want, err := CanonicalJSON(c.Parameters)
	if err != nil {
		return 0, false
	}
	// With parallel calls, siblings of the same turn never count: which of
	// them finishes first must not change the outcome.
	current := map[string]bool{}
	if st.Config.ParallelToolCalls {
		for _, sc := range st.Calls {
			current[sc.ID] = true
		}
	}
	answered := map[string]bool{}
	for _, msg := range transcript {
		if msg.Seq >= st.FirstMsgSeq && msg.Role == RoleToolResult {
			answered[msg.ToolCallID()] = true
		}
	}
	for _, msg := range transcript {
		if msg.Seq < st.FirstMsgSeq || msg.Role != RoleToolCall || msg.ToolName() != c.Name || msg.ToolCallID() == c.ID || current[msg.ToolCallID()] {
			continue
		}
		if !answered[msg.ToolCallID()] {
			continue
		}
		got, err := CanonicalJSON(msg.Metadata[MetaParameters])
		if err == nil && string(got) == string(want) {
			turn := 0
			if n, ok := msg.Metadata[MetaTurn].(json.Number); ok {
				v, _ := n.Int64()
				turn = int(v)
			} else if n, ok := msg.Metadata[MetaTurn].(int); ok {
				turn = n
			}
			return turn, true
		}
	}
	return 0, false
}

// ---- apply ----

// Apply folds one input into the run and returns the transition's output.
// It never changes st; on error the caller's state is untouched and the
// output is empty.
func (m *Machine) Apply(ctx context.Context, st RunState, transcript []Message, in Input) (Output, error) {
	s := st.cloneMutable()
	t := &tx{m: m, ctx: ctx, st: &s, now: m.Clock.Now(), out: &Output{}, transcript: transcript}
	var err error
	switch in := in.(type) {
	case ModelReplied:
		err = t.modelReplied(in)
	case ToolExecuted:
		err = t.toolExecuted(in)
	case ToolDecided:
		err = t.toolDecided(in)
	case ClientResult:
		err = t.clientResult(in)
	case ApprovalDecision:
		err = t.approval(in)
	case Expire:
		err = t.expire()
	case Compacted:
		err = t.compacted(in)
	case GuardrailDenied:
		err = t.guardrailDenied(in)
	case Steer:
		err = t.steer(in)
	case Cancel:
		reason := strings.TrimSpace(in.Reason)
		if reason == "" {
			reason = "cancelled by the caller"
		}
		err = t.cancel(StatusCancelled, ErrTypeCancelled, reason, nil)
	case Interrupt:
		reason := strings.TrimSpace(in.Reason)
		if reason == "" {
			reason = "interrupted"
		}
		meta := cloneObject(in.Metadata)
		if meta == nil {
			meta = map[string]any{}
		}
		meta["action"] = "interrupt"
		meta["reason"] = reason
		err = t.cancel(StatusInterrupted, ErrTypeCancelled, reason, meta)
	case nil:
		err = invalid("nil input")
	default:
		err = invalid("unsupported input %T", in)
	}
	if err != nil {
		return Output{}, err
	}
	s.Version++
	s.UpdatedAt = t.now
	t.out.State = s
	return *t.out, nil
}

// cloneMutable copies the parts of the state a transition mutates.
func (st RunState) cloneMutable() RunState {
	st.Calls = append([]CallState(nil), st.Calls...)
	st.Budgets = append([]BudgetState(nil), st.Budgets...)
	st.Queue = append([]QueuedMessage(nil), st.Queue...)
	u := make(map[string]any, len(st.Usage))
	for k, v := range st.Usage {
		u[k] = v
	}
	st.Usage = u
	return st
}

// tx accumulates one transition's output.
type tx struct {
	m          *Machine
	ctx        context.Context
	st         *RunState
	now        time.Time
	out        *Output
	transcript []Message
	external   bool
}

func (t *tx) emit(typ string, data map[string]any) {
	ev := Event{Seq: t.st.NextEventSeq, Type: typ, Turn: t.st.Turn, At: t.now, Data: data}
	t.st.NextEventSeq++
	t.out.Events = append(t.out.Events, ev)
}

func (t *tx) appendMessage(msg Message) {
	msg.Seq = t.st.NextMsgSeq
	t.st.NextMsgSeq++
	t.out.Messages = append(t.out.Messages, msg)
}

func (t *tx) schedule(kind, callID string) int64 {
	t.st.StepSeq++
	seq := t.st.StepSeq
	t.out.Next = append(t.out.Next, Step{Kind: kind, V: StepVersion, RunID: t.st.RunID, Seq: seq, CallID: callID})
	return seq
}

// enqueue queues a user message for the top of the next iteration; an
// identical completion-policy message already queued is not queued twice.
func (st *RunState) enqueue(q QueuedMessage) {
	if q.Source == "completion_policy" {
		for _, e := range st.Queue {
			if e == q {
				return
			}
		}
	}
	st.Queue = append(st.Queue, q)
}

func queuedMessage(q QueuedMessage) Message {
	return Message{Role: RoleUser, Content: q.Content, Metadata: map[string]any{MetaSource: q.Source}}
}

// beginTurn starts the iteration of a planned model_turn step: it checks
// the step is current, counts the turn and drains the queued user
// messages the model saw.
func (t *tx) beginTurn(step Step) error {
	s := t.st
	if IsTerminal(s.Status) {
		return ErrTerminal
	}
	if step.Kind != StepModelTurn || step.Seq != s.ModelStep || s.ModelStep == 0 {
		return fmt.Errorf("%w: model_turn %d", ErrStaleStep, step.Seq)
	}
	s.ModelStep = 0
	view, trim := s.modelView(t.transcript)
	s.Turn++
	t.emit(EventTurnStarted, map[string]any{"turn": s.Turn})
	t.drainQueue(view, trim)
	return nil
}

func (t *tx) modelReplied(in ModelReplied) error {
	s := t.st
	if err := t.beginTurn(in.Step); err != nil {
		return err
	}
	if in.Err != nil {
		t.fail("model_error", in.Err.Error())
		return nil
	}
	if g := t.m.Guardrails.Output; g != nil {
		msg := assistantView(in.Reply)
		if res := checkGuardrail(func() GuardrailResult { return g(t.ctx, msg) }); !res.Allowed {
			t.guardrailFail("output", res.Reason)
			return nil
		}
	}
	accumulateUsage(s.Usage, in.Reply.Usage)
	if len(in.Reply.RequestMetadata) > 0 {
		s.RequestMetadata = cloneObject(in.Reply.RequestMetadata)
	}
	if b := s.budget(BudgetTurns); b != nil {
		b.Current++
	}
	if b := s.budget(BudgetTotalTokens); b != nil {
		b.Current = int(numberOf(s.Usage["total_tokens"]))
	}
	if strings.TrimSpace(in.Reply.Content) != "" {
		t.appendMessage(Message{Role: RoleAssistant, Content: in.Reply.Content, Metadata: map[string]any{MetaTurn: s.Turn}})
	}
	if len(in.Reply.ToolCalls) == 0 {
		t.finish(StatusCompleted)
		return nil
	}
	used := map[string]bool{}
	for _, msg := range t.transcript {
		if id := msg.ToolCallID(); id != "" {
			used[id] = true
		}
	}
	s.Calls = make([]CallState, 0, len(in.Reply.ToolCalls))
	for i, rc := range in.Reply.ToolCalls {
		id := strings.TrimSpace(rc.ID)
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", s.Turn, i+1)
		}
		base := id
		for n := 2; used[id]; n++ {
			id = base + "_" + strconv.Itoa(n)
		}
		used[id] = true
		params := cloneObject(rc.Parameters)
		if params == nil {
			params = map[string]any{}
		}
		name := strings.TrimSpace(rc.Name)
		s.Calls = append(s.Calls, CallState{ID: id, Name: name, Parameters: params, Status: CallPending})
		msg := toolCallMessage(id, name, params)
		msg.Metadata[MetaTurn] = s.Turn
		t.appendMessage(msg)
		t.emit(EventToolCall, map[string]any{"tool_name": name, "tool_call_id": id, "parameters": RedactedParameters(params)})
	}
	if s.Config.ParallelToolCalls {
		for i := range s.Calls {
			s.Calls[i].StepSeq = t.schedule(StepToolCall, s.Calls[i].ID)
		}
	}
	t.settle()
	return nil
}

func (t *tx) stepCall(step Step) (*CallState, error) {
	if IsTerminal(t.st.Status) {
		return nil, ErrTerminal
	}
	_, c := t.st.call(step.CallID)
	if step.Kind != StepToolCall || c == nil || c.StepSeq != step.Seq || (c.Status != CallPending && c.Status != CallApproved) {
		return nil, fmt.Errorf("%w: tool_call %d (%s)", ErrStaleStep, step.Seq, step.CallID)
	}
	c.StepSeq = 0
	return c, nil
}

func (t *tx) toolExecuted(in ToolExecuted) error {
	c, err := t.stepCall(in.Step)
	if err != nil {
		return err
	}
	decl, _ := t.st.Tool(c.Name)
	res := NormalizeToolOutput(decl, in.Output, in.Err)
	t.resolve(c, res)
	t.settle()
	return nil
}

func (t *tx) toolDecided(in ToolDecided) error {
	c, err := t.stepCall(in.Step)
	if err != nil {
		return err
	}
	d := in.Decision
	c.Complete = d.Complete
	switch d.Kind {
	case DecideResult:
		if d.Duplicate {
			t.emit(EventDuplicateToolCall, map[string]any{"tool_name": c.Name, "tool_call_id": c.ID})
		}
		decl, _ := t.st.Tool(c.Name)
		res := d.Result
		res.ToolName = c.Name
		res.Runtime = mergeRuntime(decl.Runtime, res.Runtime)
		t.resolve(c, res)
	case DecideAwaitClient:
		exp := t.now.Add(time.Duration(t.st.Config.PendingTTL))
		c.Status = CallAwaitingClient
		c.RequestID = derivedID("treq", t.st.RunID, c.ID)
		c.ExpiresAt = &exp
		t.emit(EventRuntimeToolPending, map[string]any{
			"request_id": c.RequestID, "tool_call_id": c.ID, "tool_name": c.Name,
			"parameters": RedactedParameters(c.Parameters), "expires_at": exp.Format(time.RFC3339Nano),
		})
	case DecideAwaitApproval:
		exp := t.now.Add(time.Duration(t.st.Config.PendingTTL))
		decl, _ := t.st.Tool(c.Name)
		red := RedactedParameters(c.Parameters)
		c.Status = CallAwaitingApproval
		c.ActionID = derivedID("act", t.st.RunID, c.ID)
		c.ExpiresAt = &exp
		c.Summary = approvalSummary(c.Name, red)
		c.Preview = map[string]any{"tool_name": c.Name, "description": decl.Description, "parameters": red}
		t.emit(EventApprovalRequired, map[string]any{
			"action_id": c.ActionID, "tool_call_id": c.ID, "tool_name": c.Name,
			"summary": c.Summary, "parameters": red, "expires_at": exp.Format(time.RFC3339Nano),
		})
	default:
		return invalid("unknown decision %q", d.Kind)
	}
	t.settle()
	return nil
}

func approvalSummary(name string, redacted map[string]any) string {
	b, _ := CanonicalJSON(redacted)
	s := fmt.Sprintf("Call %s with %s", name, b)
	if len(s) > 500 {
		s = truncateUTF8(s, 497) + "..."
	}
	return s
}

func (t *tx) clientResult(in ClientResult) error {
	t.external = true
	if IsTerminal(t.st.Status) {
		return ErrTerminal
	}
	var c *CallState
	for i := range t.st.Calls {
		if t.st.Calls[i].RequestID == in.RequestID && t.st.Calls[i].Status == CallAwaitingClient {
			c = &t.st.Calls[i]
		}
	}
	if c == nil {
		return fmt.Errorf("%w: no pending tool request %q", ErrNotFound, in.RequestID)
	}
	if !t.now.Before(*c.ExpiresAt) {
		return fmt.Errorf("%w: tool request %q expired at %s", ErrExpired, in.RequestID, c.ExpiresAt.Format(time.RFC3339))
	}
	decl, _ := t.st.Tool(c.Name)
	var res ToolResult
	if in.Success {
		res = NormalizeToolOutput(decl, map[string]any{"success": true, "result": in.Result}, nil)
	} else {
		msg := strings.TrimSpace(in.Error)
		if msg == "" {
			msg = "The client reported that the tool failed"
		}
		res = ToolResult{Success: false, ToolName: c.Name, Error: msg, ErrorType: ErrTypeClientError, Runtime: mergeRuntime(decl.Runtime, nil)}
	}
	t.emit(EventRuntimeToolSubmitted, map[string]any{"request_id": c.RequestID, "tool_call_id": c.ID, "tool_name": c.Name, "success": in.Success})
	t.resolve(c, res)
	t.settle()
	return nil
}

func (t *tx) approval(in ApprovalDecision) error {
	t.external = true
	if IsTerminal(t.st.Status) {
		return ErrTerminal
	}
	if in.Decision != "accept" && in.Decision != "reject" {
		return invalid("decision must be \"accept\" or \"reject\", got %q", in.Decision)
	}
	var c *CallState
	for i := range t.st.Calls {
		if t.st.Calls[i].ActionID == in.ActionID && t.st.Calls[i].Status == CallAwaitingApproval {
			c = &t.st.Calls[i]
		}
	}
	if c == nil {
		return fmt.Errorf("%w: no pending action %q", ErrNotFound, in.ActionID)
	}
	if !t.now.Before(*c.ExpiresAt) {
		return fmt.Errorf("%w: action %q expired at %s", ErrExpired, in.ActionID, c.ExpiresAt.Format(time.RFC3339))
	}
	data := map[string]any{"action_id": c.ActionID, "tool_call_id": c.ID, "tool_name": c.Name, "decision": in.Decision}
	if in.Reason != "" {
		data["reason"] = in.Reason
	}
	t.emit(EventApprovalDecided, data)
	if in.Decision == "accept" {
		c.Approved = true
		c.Status = CallApproved
		c.ExpiresAt = nil
		c.StepSeq = t.schedule(StepToolCall, c.ID)
	} else {
		msg := fmt.Sprintf("The approver rejected the call to '%s'", c.Name)
		if r := strings.TrimSpace(in.Reason); r != "" {
			msg += ": " + r
		}
		decl, _ := t.st.Tool(c.Name)
		t.resolve(c, ToolResult{Success: false, ToolName: c.Name, Error: msg, ErrorType: ErrTypeRejected, Runtime: mergeRuntime(decl.Runtime, nil)})
	}
	t.settle()
	return nil
}

func (t *tx) expire() error {
	t.external = true
	if IsTerminal(t.st.Status) {
		return ErrTerminal
	}
	n := 0
	for i := range t.st.Calls {
		c := &t.st.Calls[i]
		if (c.Status != CallAwaitingClient && c.Status != CallAwaitingApproval) || c.ExpiresAt == nil || t.now.Before(*c.ExpiresAt) {
			continue
		}
		kind, id, msg := "tool_request", c.RequestID, fmt.Sprintf("The client tool request for '%s' expired before a result was submitted", c.Name)
		if c.Status == CallAwaitingApproval {
			kind, id, msg = "action", c.ActionID, fmt.Sprintf("The approval request for '%s' expired before a decision was made", c.Name)
		}
		t.emit(EventPendingExpired, map[string]any{"kind": kind, "id": id, "tool_call_id": c.ID, "tool_name": c.Name})
		decl, _ := t.st.Tool(c.Name)
		t.resolve(c, ToolResult{Success: false, ToolName: c.Name, Error: msg, ErrorType: ErrTypeTimedOut, Runtime: mergeRuntime(decl.Runtime, nil)})
		n++
	}
	if n == 0 {
		return ErrNothingToApply
	}
	t.settle()
	return nil
}

// resolve records a call's result in the state, capping its size.
func (t *tx) resolve(c *CallState, res ToolResult) {
	res.ToolName = c.Name
	if res.Result != nil {
		if b, err := CanonicalJSON(res.Result); err == nil && len(b) > t.st.Config.ToolResultMaxBytes {
			limit := t.st.Config.ToolResultMaxBytes
			res.Result = map[string]any{
				"truncated":      true,
				"original_bytes": len(b),
				"preview":        truncateUTF8(string(b), limit),
			}
			t.emit(EventToolResultTruncated, map[string]any{
				"tool_name": c.Name, "tool_call_id": c.ID, "original_bytes": len(b), "max_bytes": limit,
			})
		}
	}
	c.Status = CallResolved
	c.Result = &res
	c.StepSeq = 0
	c.ExpiresAt = nil
}

// closeOpen gives every call that has no result yet a failed, uncounted
// result, so the transcript never holds a call without a result.
func (t *tx) closeOpen(reason string) {
	t.closeOpenWith(ErrTypeSkipped, fmt.Sprintf("Not executed: the run stopped before this call (%s)", reason))
}

func (t *tx) closeOpenWith(errType, msg string) {
	for i := range t.st.Calls {
		c := &t.st.Calls[i]
		if c.Status == CallDone || c.Status == CallResolved {
			continue
		}
		c.Uncounted = true
		decl, _ := t.st.Tool(c.Name)
		t.resolve(c, ToolResult{Success: false, ToolName: c.Name, ErrorType: errType, Error: msg, Runtime: mergeRuntime(decl.Runtime, nil)})
	}
	t.st.ModelStep = 0
}

// settle appends the results that are in, in call order, and decides
// what happens next: another call, a pause, the next turn or the end.
func (t *tx) settle() {
	s := t.st
	for i := range s.Calls {
		c := &s.Calls[i]
		if c.Status == CallDone {
			continue
		}
		if c.Status != CallResolved {
			break
		}
		t.record(c)
		c.Status = CallDone
	}
	allDone := true
	for _, c := range s.Calls {
		if c.Status != CallDone {
			allDone = false
			break
		}
	}
	if allDone {
		s.Calls = nil
		t.advance()
		return
	}
	if !s.Config.ParallelToolCalls {
		for i := range s.Calls {
			c := &s.Calls[i]
			if c.Status == CallDone {
				continue
			}
			if c.Status == CallPending && c.StepSeq == 0 {
				c.StepSeq = t.schedule(StepToolCall, c.ID)
			}
			break
		}
	}
	t.setActiveStatus()
}

// setActiveStatus sets running/queued while steps are in flight, or the
// paused status when only outside inputs can move the run.
func (t *tx) setActiveStatus() {
	inFlight, client, approval := false, false, false
	for _, c := range t.st.Calls {
		switch c.Status {
		case CallPending, CallApproved:
			if c.StepSeq != 0 {
				inFlight = true
			}
		case CallAwaitingClient:
			client = true
		case CallAwaitingApproval:
			approval = true
		}
	}
	switch {
	case inFlight || t.st.ModelStep != 0:
		if t.external {
			t.st.Status = StatusQueued
		} else {
			t.st.Status = StatusRunning
		}
	case approval:
		t.st.Status = StatusApprovalRequired
	case client:
		t.st.Status = StatusRuntimeToolPending
	default:
		t.st.Status = StatusRunning
	}
}

// record appends one call's result to the transcript and the result,
// audit and event records, counts budgets and consults the completion
// policy.
func (t *tx) record(c *CallState) {
	s := t.st
	res := *c.Result
	decl, _ := s.Tool(c.Name)
	meta := map[string]any{MetaToolCallID: c.ID, MetaToolName: c.Name, MetaSuccess: res.Success, MetaTurn: s.Turn}
	if res.ErrorType != "" {
		meta[MetaErrorType] = res.ErrorType
	}
	seq := s.NextMsgSeq
	t.appendMessage(Message{Role: RoleToolResult, Content: resultText(res), Metadata: meta})
	t.out.ToolResults = append(t.out.ToolResults, ToolExecutionResult{
		ToolName: c.Name, ToolCallID: c.ID, Parameters: cloneObject(c.Parameters), Result: res,
		Runtime: res.Runtime, TurnCount: s.Turn, Seq: seq,
	})
	ae := auditEvent(s.Turn, decl, c, res)
	ae.Seq = seq
	t.out.Audit = append(t.out.Audit, ae)
	evData := map[string]any{"tool_name": c.Name, "tool_call_id": c.ID, "success": res.Success}
	if res.ErrorType != "" {
		evData["error_type"] = res.ErrorType
	}
	t.emit(EventToolResult, evData)
	if c.Uncounted || s.Stop != nil {
		return
	}
	for _, name := range []string{BudgetToolCalls, budgetToolPrefix + c.Name} {
		if b := s.budget(name); b != nil {
			b.Current++
			if b.Exceeded() && s.Stop == nil {
				t.tripBudget(b)
			}
		}
	}
	if s.Stop != nil {
		t.closeOpen("budget " + s.Budget + " exceeded")
		return
	}
	if c.Complete {
		s.Stop = &stop{Status: StatusCompleted, Reason: "pre_tool_mediator"}
		t.emit(EventMediatorComplete, map[string]any{"tool_name": c.Name, "tool_call_id": c.ID})
		t.closeOpen("the pre-tool mediator completed the run")
		return
	}
	if t.m.CompletionPolicy != nil {
		d := callCompletion(t.ctx, t.m.CompletionPolicy, CompletionContext{RunID: s.RunID, Turn: s.Turn, ToolName: c.Name, ToolCallID: c.ID, Result: res})
		data := map[string]any{"tool_name": c.Name, "turn": s.Turn}
		if d.Message != "" {
			data["message"] = d.Message
		}
		if len(d.Context) > 0 {
			data["context"] = cloneObject(d.Context)
		}
		if d.Complete {
			s.Stop = &stop{Status: StatusCompleted, Reason: "completion_policy"}
			t.emit(EventCompletionPolicyStop, data)
		} else if strings.TrimSpace(d.Message) != "" {
			s.enqueue(QueuedMessage{Source: "completion_policy", Content: d.Message})
			t.emit(EventCompletionPolicyContinue, data)
		}
	}
}

func callCompletion(ctx context.Context, f CompletionPolicy, cc CompletionContext) (d CompletionDecision) {
	defer func() {
		if r := recover(); r != nil {
			d = CompletionDecision{}
		}
	}()
	return f(ctx, cc)
}

func (t *tx) tripBudget(b *BudgetState) {
	t.st.Stop = &stop{Status: StatusBudgetExceeded, Reason: "budget " + b.Name}
	t.st.Budget = b.Name
	t.emit(EventBudgetExceeded, map[string]any{"budget": b.Name, "current": b.Current, "ceiling": b.Ceiling})
}

// advance runs between turns: it ends the run when a stop was requested,
// max_turns is reached or a turn budget trips, and otherwise schedules the
// next model turn.
func (t *tx) advance() {
	s := t.st
	if s.Stop != nil {
		t.finish(s.Stop.Status)
		return
	}
	if b := s.budget(BudgetTurns); b != nil {
		if b.Exceeded() {
			t.tripBudget(b)
			t.finish(StatusBudgetExceeded)
			return
		}
	} else if s.Turn >= s.Config.MaxTurns {
		t.emit(EventMaxTurnsReached, map[string]any{"max_turns": s.Config.MaxTurns, "turn_count": s.Turn})
		t.finish(StatusMaxTurnsReached)
		return
	}
	if b := s.budget(BudgetTotalTokens); b != nil && b.Exceeded() {
		t.tripBudget(b)
		t.finish(StatusBudgetExceeded)
		return
	}
	s.ModelStep = t.schedule(StepModelTurn, "")
	t.setActiveStatus()
}

func (t *tx) finish(status string) {
	s := t.st
	s.Status = status
	s.Calls = nil
	s.ModelStep = 0
	s.Stop = nil
	t.emit(EventCompleted, map[string]any{"status": status, "completed": status == StatusCompleted, "turn_count": s.Turn})
}

func (t *tx) fail(code, msg string) {
	s := t.st
	t.closeOpen("the run failed")
	t.settleClosed()
	s.Status = StatusFailed
	s.Error = &RunError{Code: code, Message: msg}
	s.Calls = nil
	s.ModelStep = 0
	s.Stop = nil
	t.emit(EventFailed, map[string]any{"code": code, "error": msg})
}

// settleClosed appends the results of calls closed by a failure.
func (t *tx) settleClosed() {
	for i := range t.st.Calls {
		c := &t.st.Calls[i]
		if c.Status == CallResolved {
			t.record(c)
			c.Status = CallDone
		}
	}
}

// ---- helpers ----

func derivedID(prefix, runID, callID string) string {
	sum := sha256.Sum256([]byte(prefix + "\x00" + runID + "\x00" + callID))
	return prefix + "_" + hex.EncodeToString(sum[:10])
}

func resultText(res ToolResult) string {
	if !res.Success {
		return res.Error
	}
	switch v := res.Result.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, err := CanonicalJSON(res.Result)
	if err != nil {
		return fmt.Sprint(res.Result)
	}
	return string(b)
}

func auditEvent(turn int, decl ToolDeclaration, c *CallState, res ToolResult) AuditEvent {
	red, redacted := Redact(paramsValue(c.Parameters))
	pb, _ := CanonicalJSON(red)
	rb, _ := CanonicalJSON(res)
	source, executor := decl.Source, decl.Executor
	if decl.Name == "" {
		source, executor = "unknown", "none"
	}
	status := "success"
	if !res.Success {
		status = "error"
	}
	return AuditEvent{
		SchemaVersion: 1, Type: "tool_call", TurnCount: turn, ToolName: c.Name, ToolCallID: c.ID,
		ToolSource: source, Executor: executor, ParametersSHA256: SHA256Tagged(pb), ParametersRedacted: redacted,
		Success: res.Success, ResultStatus: status, ResultSHA256: SHA256Tagged(rb), ErrorType: res.ErrorType,
	}
}

func paramsValue(p map[string]any) any {
	if p == nil {
		return map[string]any{}
	}
	return p
}

func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n]
}
