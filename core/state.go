package core

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// StateFormat is the version of the serialized RunState shape, stored as
// RunState.Format. It is not RunState.Version, the optimistic-concurrency
// version of one run.
const StateFormat = 1

// RunStatus is the status of a run. Its values are stored in run state
// and sent in envelopes and views as they are.
type RunStatus string

// Run statuses.
const (
	StatusQueued                   RunStatus = "queued"
	StatusRunning                            = "running"
	StatusRuntimeToolPending                 = "runtime_tool_pending"
	StatusApprovalRequired                   = "approval_required"
	StatusCompleted                          = "completed"
	StatusMaxTurnsReached                    = "max_turns_reached"
	StatusBudgetExceeded                     = "budget_exceeded"
	StatusFailed                             = "failed"
	StatusCancelled                          = "cancelled"
	StatusInterrupted                        = "interrupted"
	StatusStalled                            = "stalled"
	StatusTranscriptLockContention           = "transcript_lock_contention"
)

// IsTerminal reports whether a status ends a run.
func IsTerminal(status RunStatus) bool {
	switch status {
	case StatusQueued, StatusRunning, StatusRuntimeToolPending, StatusApprovalRequired:
		return false
	}
	return true
}

// CallStatus is the status of one tool call within a model turn.
type CallStatus string

// Call statuses within one model turn (and CallAwaitingRemote, in
// remote.go: a remote agent's task answers the call).
const (
	CallPending          CallStatus = "pending"           // to be mediated; a step is scheduled when StepSeq != 0
	CallAwaitingClient              = "awaiting_client"   // a client-tool request is pending
	CallAwaitingApproval            = "awaiting_approval" // an approval action is pending
	CallApproved                    = "approved"          // accepted; a step is scheduled to run it
	CallAwaitingChild               = "awaiting_child"    // a child run answers it (agent tools)
	CallResolved                    = "resolved"          // result recorded, waiting to be appended in order
	CallDone                        = "done"              // result appended to the transcript
)

// Duration is a time.Duration that reads and writes Go duration strings
// ("24h", "90s").
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string like \"24h\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if v <= 0 {
		return fmt.Errorf("duration must be positive, got %q", s)
	}
	*d = Duration(v)
	return nil
}

// ModelSpec names the model of a run. Turns is the script of the scripted
// provider.
type ModelSpec struct {
	Provider string         `json:"provider"`
	Model    string         `json:"model,omitempty"`
	Turns    []ScriptedTurn `json:"turns,omitempty"`
	Options  map[string]any `json:"options,omitempty"`
	// plain is 1 + how many of the first Turns play whatever tools are
	// offered (no IfOffered), counted when a run starts (0: not counted),
	// so the scripted model finds turn N without a scan.
	plain int
}

// Defaults of a run's configuration.
const (
	DefaultMaxTurns           = 8
	DefaultPendingTTL         = 24 * time.Hour
	DefaultToolResultMaxBytes = 256 * 1024
)

// RunConfig is fixed when a run starts.
type RunConfig struct {
	Agent string `json:"agent,omitempty"`
	// AgentVersion is the agents file version the run started on
	// (versions.go): every later step runs on its declarations.
	AgentVersion string            `json:"agent_version,omitempty"`
	Model        ModelSpec         `json:"model"`
	System       string            `json:"system,omitempty"`
	Tools        []ToolDeclaration `json:"tools,omitempty"`
	MaxTurns     int               `json:"max_turns"`
	Budgets      map[string]int    `json:"budgets,omitempty"`
	// CostBudgetUSD is the cost_usd budget's ceiling in US dollars (0:
	// none): the run stops with budget_exceeded once its priced cost
	// reaches it (see cost.go).
	CostBudgetUSD      float64           `json:"cost_budget_usd,omitempty"`
	PendingTTL         Duration          `json:"pending_ttl"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls,omitempty"`
	ContextBudget      int               `json:"context_budget,omitempty"`
	ToolResultMaxBytes int               `json:"tool_result_max_bytes"`
	Metadata           map[string]any    `json:"metadata,omitempty"`
	Policy             PolicyConfig      `json:"policy"`
	Compaction         *CompactionPolicy `json:"compaction,omitempty"`
	Principal          *Principal        `json:"principal,omitempty"`
	// NoTokenStream turns off streaming the model's tokens to live
	// streams (stream_tokens: false on the agent or the request); the
	// committed run is the same either way.
	NoTokenStream bool `json:"no_token_stream,omitempty"`
	// Callback is the run's webhook: where its notifications are POSTed,
	// signed with its agent's callback secret (nil: none).
	Callback *Callback `json:"callback,omitempty"`
	// Visible lists the tools the model sees; it is resolved by Start.
	Visible []string `json:"visible_tools"`
	// MaxDepth bounds how deep child runs nest below this run's tree
	// (0: DefaultMaxDepth); Parent, on a child run, is the call it
	// answers (children.go).
	MaxDepth int        `json:"max_depth,omitempty"`
	Parent   *ParentRef `json:"parent,omitempty"`
	// ForkedFrom, on a forked run, is its source run, the message it
	// forked at and its tool mode (fork.go).
	ForkedFrom *ForkRef `json:"forked_from,omitempty"`
	// Eval, on a case run of an eval (or its judge's run), names the
	// eval and the case (evals.go).
	Eval *EvalRef `json:"eval,omitempty"`
	// Memory is the run's long-term memory (memory.go): whose scope it
	// uses, what it recalls and whether it is extracted; nil: none.
	Memory *MemoryPolicy `json:"memory,omitempty"`
	// Schedule, on a run a schedule started, names the schedule and the
	// fire time (schedule.go).
	Schedule *ScheduleRef `json:"schedule,omitempty"`
}

// withDefaults fills unset fields.
func (c RunConfig) withDefaults() RunConfig {
	if c.MaxTurns <= 0 {
		c.MaxTurns = DefaultMaxTurns
	}
	if c.PendingTTL <= 0 {
		c.PendingTTL = Duration(DefaultPendingTTL)
	}
	if c.ContextBudget < 0 {
		c.ContextBudget = 0
	}
	if c.ToolResultMaxBytes <= 0 {
		c.ToolResultMaxBytes = DefaultToolResultMaxBytes
	}
	c.Model.plain = 1
	for _, t := range c.Model.Turns {
		if t.IfOffered != "" || t.IfUserSaid != "" {
			break
		}
		c.Model.plain++
	}
	return c
}

// Validate checks a configuration after defaults.
func (c RunConfig) Validate() error {
	if c.Model.Provider == "" {
		return invalid("model.provider is required")
	}
	if err := validateModelOptions(c.Model); err != nil {
		return invalid("model.options: %v", err)
	}
	if err := c.Compaction.Validate(); err != nil {
		return err
	}
	if c.CostBudgetUSD < 0 || math.IsNaN(c.CostBudgetUSD) || math.IsInf(c.CostBudgetUSD, 0) {
		return invalid("budget %q must be a positive number of US dollars", BudgetCostUSD)
	}
	for _, name := range sortedKeys(c.Budgets) {
		ceiling := c.Budgets[name]
		if name == BudgetCostUSD {
			return invalid("budget %q is a number of US dollars (RunConfig.CostBudgetUSD)", name)
		}
		if !validBudgetName(name) {
			return invalid("unknown budget %q (want turns, tool_calls, tool_calls_<tool> or total_tokens)", name)
		}
		if ceiling <= 0 {
			return invalid("budget %q must be a positive integer", name)
		}
	}
	seen := map[string]bool{}
	for _, t := range c.Tools {
		if seen[t.Name] {
			return invalid("tool %q is declared twice", t.Name)
		}
		seen[t.Name] = true
		if err := t.Access.validate(); err != nil {
			return invalid("tool %q: %v", t.Name, err)
		}
	}
	return nil
}

// Budget names.
const (
	BudgetTurns       = "turns"
	BudgetToolCalls   = "tool_calls"
	BudgetTotalTokens = "total_tokens"
	budgetToolPrefix  = "tool_calls_"
)

func validBudgetName(n string) bool {
	switch n {
	case BudgetTurns, BudgetToolCalls, BudgetTotalTokens:
		return true
	}
	return len(n) > len(budgetToolPrefix) && n[:len(budgetToolPrefix)] == budgetToolPrefix
}

// BudgetState is one budget: it is exceeded when Current reaches
// Ceiling (the cost_usd budget: when CurrentUSD reaches CeilingUSD).
type BudgetState struct {
	Name       string  `json:"name"`
	Ceiling    int     `json:"ceiling"`
	Current    int     `json:"current"`
	CeilingUSD float64 `json:"ceiling_usd,omitempty"`
	CurrentUSD float64 `json:"current_usd,omitempty"`
}

// Exceeded reports whether the count reached the ceiling.
func (b BudgetState) Exceeded() bool {
	if b.Name == BudgetCostUSD {
		return b.CurrentUSD >= b.CeilingUSD
	}
	return b.Current >= b.Ceiling
}

// CallState is one tool call of the current model turn.
type CallState struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	Parameters map[string]any `json:"parameters"`
	Status     CallStatus     `json:"status"`
	StepSeq    int64          `json:"step_seq,omitempty"`
	RequestID  string         `json:"request_id,omitempty"`
	ActionID   string         `json:"action_id,omitempty"`
	ExpiresAt  *time.Time     `json:"expires_at,omitempty"`
	Summary    string         `json:"summary,omitempty"`
	Preview    map[string]any `json:"preview,omitempty"`
	Approved   bool           `json:"approved,omitempty"`
	// Replayed is the source's recorded result a forked run's call was
	// answered with (fork.go).
	Replayed *ReplayRef `json:"replayed,omitempty"`
	// ChildRunID is the child run answering an agent tool's call.
	ChildRunID string `json:"child_run_id,omitempty"`
	// Remote is the remote agent's task answering a remote agent tool's
	// call, once it was sent (remote.go).
	Remote *RemoteTask `json:"remote,omitempty"`
	// Approval records the decision on the call's pending action, for
	// its audit record.
	Approval *ApprovalRecord `json:"approval,omitempty"`
	Result   *ToolResult     `json:"result,omitempty"`
	// Uncounted marks a result that does not count against budgets
	// (calls closed without mediation).
	Uncounted bool `json:"uncounted,omitempty"`
	// Complete asks the loop to stop after this result (pre-tool mediator).
	Complete bool `json:"complete,omitempty"`
	// ResultTruncated marks a Result cut to ToolResultMaxBytes, whose
	// preview is raw text: its tool_result event reports only its size.
	ResultTruncated bool `json:"result_truncated,omitempty"`
	// idV and nameV are ID and Name as interface values, boxed once for
	// the metadata of the call's two messages (nil in a state read back).
	idV, nameV any
	// canon is the canonical JSON of Parameters with sensitive values
	// redacted (redacted says some were), computed once for the call's
	// tool_call_start, duplicate key and audit hash (nil in a state read
	// back: computed again on first use).
	canon    string
	redacted bool
}

// canonical returns the call's parameters as canonical JSON with
// sensitive values redacted, and whether any was.
func (c *CallState) canonical() (string, bool) {
	if c.canon == "" {
		c.canon, c.redacted = canonicalString(paramsValue(c.Parameters), true)
	}
	return c.canon, c.redacted
}

// boxes returns the call's id and name as interface values.
func (c *CallState) boxes() (any, any) {
	if c.idV == nil {
		c.idV, c.nameV = c.ID, c.Name
	}
	return c.idV, c.nameV
}

// stop records why the loop stops once the current turn's calls are in.
type stop struct {
	Status RunStatus `json:"status"`
	Reason string    `json:"reason"`
}

// RunError describes why a run failed.
type RunError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// RunState is the serializable state of one run. It holds no transcript:
// its size depends on the configuration and the current turn, never on
// the transcript's length.
type RunState struct {
	// Format is StateFormat; Version below counts commits.
	Format    int       `json:"v"`
	RunID     string    `json:"run_id"`
	SessionID string    `json:"session_id"`
	Status    RunStatus `json:"status"`
	Config    RunConfig `json:"config"`
	Turn      int       `json:"turn"`
	// Version counts the run's commits; each commit is conditioned on the
	// previous Version (optimistic concurrency).
	Version         int64          `json:"version"`
	StepSeq         int64          `json:"step_seq"`
	ModelStep       int64          `json:"model_step,omitempty"`
	FirstMsgSeq     int64          `json:"first_msg_seq"`
	NextMsgSeq      int64          `json:"next_msg_seq"`
	NextEventSeq    int64          `json:"next_event_seq"`
	Budgets         []BudgetState  `json:"budgets,omitempty"`
	Usage           Usage          `json:"usage"`
	RequestMetadata map[string]any `json:"request_metadata"`
	Calls           []CallState    `json:"calls,omitempty"`
	// Inbox holds the user messages waiting for the next iteration; its
	// JSON name predates the Go name.
	Inbox []InboxMessage `json:"queue,omitempty"`
	// ToolSourcesDown are the tool sources reported unavailable in this
	// run (tool_source_unavailable), each once.
	ToolSourcesDown []string `json:"tool_sources_down,omitempty"`
	Stop            *stop    `json:"stop,omitempty"`
	CompactTurn     int      `json:"compact_turn,omitempty"`
	Budget          string   `json:"budget,omitempty"`
	// Cost is what the run cost so far (nil when the machine has no
	// Pricer).
	Cost *RunCost `json:"cost,omitempty"`
	// Handoff is a handoff decided in the current turn, made when its
	// calls are all in (handoff.go).
	Handoff *PendingHandoff `json:"handoff,omitempty"`
	// Children are the child runs the run's agent tools started, in the
	// order they started (children.go).
	Children []ChildSummary `json:"children,omitempty"`
	// Title is the run's first user message, shortened to TitleRunes
	// (the run list shows it); set when the run starts.
	Title string `json:"title,omitempty"`
	// Trace is the W3C traceparent of the run's root span (the API
	// request that started it), which every step message carries; core
	// never reads it.
	Trace string `json:"trace,omitempty"`
	// Base is where the session's transcript below its own messages is
	// kept: the shared prefix of a fork (fork.go), nil for a session
	// whose transcript is all its own. Core never reads it.
	Base []TranscriptSegment `json:"base,omitempty"`
	// Held is the sequence number of the scheduled step a chaining worker
	// continues in the invocation that committed it, instead of sending
	// it (chain.go); 0: none.
	Held int64 `json:"held,omitempty"`
	// Recalled: the run's recall before its first turn is done
	// (recall.go).
	Recalled bool `json:"recalled,omitempty"`
	// Extracted: the run's memory extraction is recorded (recall.go).
	Extracted   bool           `json:"extracted,omitempty"`
	Error       *RunError      `json:"error,omitempty"`
	Interrupted map[string]any `json:"interrupted,omitempty"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
	// index, when set, is the session's transcript index (UseIndex).
	index *TranscriptIndex
	// visible, when set, is visibleTools' answer, kept by the transitions
	// that set the catalog (nil in a state read back).
	visible []ToolDeclaration
	// arena, when set, holds the run's small records (the in-process
	// Runner's runs).
	arena *arena
	// recorded, when set, are a forked run's source's recorded calls
	// (UseRecorded).
	recorded []RecordedCall
}

// InboxMessage is a user message waiting in the run's inbox for the top
// of the next iteration (steering or a completion-policy continuation).
type InboxMessage struct {
	Content string `json:"content"`
	Source  string `json:"source"`
}

// addToInbox holds a user message for the top of the next iteration; an
// identical completion-policy message already in the inbox is not added
// twice.
func (st *RunState) addToInbox(q InboxMessage) {
	if q.Source == "completion_policy" {
		for _, e := range st.Inbox {
			if e == q {
				return
			}
		}
	}
	st.Inbox = append(st.Inbox, q)
}

// inboxMessage is the transcript message of an inbox message.
func inboxMessage(q InboxMessage) Message {
	return Message{Role: RoleUser, Content: q.Content, Metadata: map[string]any{MetaSource: q.Source}}
}

// MarshalState serializes a run state.
func MarshalState(st RunState) ([]byte, error) { return marshalNoEscape(st) }

// UnmarshalState reads a run state written by MarshalState, keeping
// numbers exact and refusing unknown versions.
func UnmarshalState(b []byte) (RunState, error) {
	var st RunState
	if err := decodeJSON(b, &st); err != nil {
		return RunState{}, fmt.Errorf("decode run state: %w", err)
	}
	if st.Format != StateFormat {
		return RunState{}, fmt.Errorf("decode run state: unsupported version %d", st.Format)
	}
	return st, nil
}

// Tool returns the declaration named name.
func (st *RunState) Tool(name string) (ToolDeclaration, bool) {
	for _, t := range st.Config.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return ToolDeclaration{}, false
}

func (st *RunState) call(id string) (int, *CallState) {
	for i := range st.Calls {
		if st.Calls[i].ID == id {
			return i, &st.Calls[i]
		}
	}
	return -1, nil
}

// PendingToolRequest is a client-tool request waiting for a result.
type PendingToolRequest struct {
	RequestID  string         `json:"request_id"`
	ToolCallID string         `json:"tool_call_id"`
	ToolName   string         `json:"tool_name"`
	Parameters map[string]any `json:"parameters"`
	ExpiresAt  time.Time      `json:"expires_at"`
	// RunID is set on a child run's request listed in its parent's
	// pending (sub-agents): the run it belongs to.
	RunID string `json:"run_id,omitempty"`
}

// PendingAction is an approval waiting for a decision.
type PendingAction struct {
	ActionID   string         `json:"action_id"`
	Kind       string         `json:"kind"`
	ToolCallID string         `json:"tool_call_id"`
	ToolName   string         `json:"tool_name"`
	Summary    string         `json:"summary"`
	Preview    map[string]any `json:"preview"`
	ExpiresAt  time.Time      `json:"expires_at"`
	// RunID: as PendingToolRequest's.
	RunID string `json:"run_id,omitempty"`
}

// Pending lists the requests and actions the run waits on, in call order.
func (st *RunState) Pending() ([]PendingToolRequest, []PendingAction) {
	var reqs []PendingToolRequest
	var acts []PendingAction
	for _, c := range st.Calls {
		switch c.Status {
		case CallAwaitingClient:
			params := c.Parameters
			if c.Remote != nil && c.Remote.Question != nil {
				params = c.Remote.Question // a remote task's question
			}
			reqs = append(reqs, PendingToolRequest{RequestID: c.RequestID, ToolCallID: c.ID, ToolName: c.Name, Parameters: params, ExpiresAt: *c.ExpiresAt})
		case CallAwaitingApproval:
			acts = append(acts, PendingAction{ActionID: c.ActionID, Kind: "tool_call", ToolCallID: c.ID, ToolName: c.Name, Summary: c.Summary, Preview: c.Preview, ExpiresAt: *c.ExpiresAt})
		}
	}
	return reqs, acts
}

// NextExpiry returns the earliest expiry among pending items.
func (st *RunState) NextExpiry() (time.Time, bool) {
	var min time.Time
	found := false
	for _, c := range st.Calls {
		if (c.Status == CallAwaitingClient || c.Status == CallAwaitingApproval) && c.ExpiresAt != nil {
			if !found || c.ExpiresAt.Before(min) {
				min, found = *c.ExpiresAt, true
			}
		}
	}
	return min, found
}

func budgetsFrom(m map[string]int, costUSD float64) []BudgetState {
	out := make([]BudgetState, 0, len(m)+1)
	for _, k := range sortedKeys(m) {
		out = append(out, BudgetState{Name: k, Ceiling: m[k]})
	}
	if costUSD > 0 {
		out = append(out, BudgetState{Name: BudgetCostUSD, CeilingUSD: costUSD})
	}
	return out
}

func (st *RunState) budget(name string) *BudgetState {
	for i := range st.Budgets {
		if st.Budgets[i].Name == name {
			return &st.Budgets[i]
		}
	}
	return nil
}
