package core

import "time"

// Input is one input to Apply.
type Input interface{ isInput() }

// ToolsDiscovered adds the tools the agent's tool sources (MCP servers)
// offer at run time to the run's catalog, and reports the sources that
// could not be reached. A runner applies it before a model turn. Tools
// whose names the run already declares are ignored (a run's catalog only
// grows), and so is a source already reported unavailable in this run;
// nothing new is ErrNothingToApply. The added tools go through the run's
// visibility policy like the declared ones.
type ToolsDiscovered struct {
	Tools       []ToolDeclaration
	Unavailable []ToolSourceFailure
}

// ToolSourceFailure is a tool source that could not be reached.
type ToolSourceFailure struct {
	Source string
	Error  string
}

// ModelReplied is the outcome of a model_turn step's model call.
type ModelReplied struct {
	Step  Step
	Reply ModelReply
	Err   error
	// InputRedacted is the plan's InputRedacted: how many messages of the
	// model's view the input guardrail redacted.
	InputRedacted int
	// StartedAt is when the model call began (zero when unknown): the
	// turn's turn_started event carries it, although the event is
	// committed with the reply.
	StartedAt time.Time
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

// DecisionKind is the kind of a mediation decision.
type DecisionKind string

// Decision kinds of ToolDecided.
const (
	DecideResult        DecisionKind = "result"
	DecideAwaitClient                = "await_client"
	DecideAwaitApproval              = "await_approval"
	// DecideAwaitChild: the call's child run was started (ChildRunID);
	// its end answers the call.
	DecideAwaitChild = "await_child"
)

// Decision is a mediation outcome that needs no execution.
type Decision struct {
	Kind     DecisionKind
	Result   ToolResult
	Complete bool
	// Duplicate marks a duplicate-call correction.
	Duplicate bool
	// Replayed marks a forked run's call answered from its source's
	// record (fork.go): the recorded result's reference.
	Replayed *ReplayRef
	// ChildRunID is the started child run of DecideAwaitChild.
	ChildRunID string
	// Remote is the remote task of DecideAwaitRemote and
	// DecideRemoteInput; Wait is how long DecideAwaitRemote waits before
	// the call's step is scheduled again (the runner's backoff).
	Remote *RemotePending
	Wait   time.Duration
	// Handoff is the configuration of the agent a DecideHandoff call
	// hands the run to.
	Handoff *RunConfig
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
	// Resolver is the principal deciding (for the HTTP API, the token
	// that sent the decision); nil when the caller has none. Only its
	// identifiers (Principal.Resolver) are recorded: in the
	// approval_decided event and in the call's audit record.
	Resolver *Principal
}

// Expire expires every pending request and action whose time has come.
type Expire struct{}

// Compacted is the outcome of a compaction step: the summary, or the
// error that kept it from being written (the transcript then stays as it
// is). When a model call wrote it, Model names that model and Usage is
// the call's token usage, counted in the run's usage and budgets; both
// are empty when a Summarizer wrote it. A retryable Err (see Retryable)
// makes the durable runner retry the step, as for a model turn.
type Compacted struct {
	Step    Step
	Summary string
	Model   *ModelSpec
	Usage   map[string]any
	Err     error
}

// GuardrailDenied is the input guardrail's denial, planned for a model
// step; applying it fails the run.
type GuardrailDenied struct {
	Step   Step
	Kind   string
	Reason string
}

// Steer adds a user message to the run's inbox for the top of its next
// iteration.
type Steer struct{ Content string }

// MaxSteeringChars caps one steering message.
const MaxSteeringChars = 100_000

// SetCallback replaces the run's callback (nil removes it): a protocol
// edge configuring where the run's notifications go (an A2A push
// notification configuration).
type SetCallback struct{ Callback *Callback }

// Cancel ends the run cooperatively with status cancelled.
type Cancel struct{ Reason string }

// Interrupt ends the run with status interrupted. The envelope's
// interrupted field is the normalized interrupt message: the caller's
// Metadata (such as source) with action (Action, default "interrupt")
// and reason set over it.
type Interrupt struct {
	Action   string
	Reason   string
	Metadata map[string]any
}

// ModelRetrying reports that the model call of the current model_turn
// step failed transiently and that the provider is waiting Retry.Wait
// before trying again in the same call. Applying it emits a model_retry
// event and moves the run's UpdatedAt (and so the time a sweeper treats
// the step as stalled); the step stays current, so the call's
// ModelReplied still applies. A step that is no longer current is
// ErrStaleStep, a finished run ErrTerminal.
type ModelRetrying struct {
	Step  Step
	Retry ModelRetry
}

// ToolRetrying reports that the execution of the current tool_call
// step's call failed transiently and that the step runs again when the
// queue delivers it again (Retry.Wait from now). Applying it emits a
// tool_retry event, so a follower hears of the failure at once rather
// than after the last attempt; the step stays current. A step that is no
// longer current is ErrStaleStep, a finished run ErrTerminal.
type ToolRetrying struct {
	Step  Step
	Retry ToolRetry
}

// Heartbeat reports that the I/O of a current model_turn or tool_call
// step is still running. Applying it changes nothing but the run's
// version and UpdatedAt, so a sweeper does not send a step again whose
// worker is alive; it emits no event. A step that is no longer current
// is ErrStaleStep, a finished run ErrTerminal.
type Heartbeat struct{ Step Step }

// StallResend is a scheduler's notice that the run's scheduled steps have
// not moved for the stall period (a step lost between a commit and its
// send, or one waiting behind a long backlog), or, for a step a chaining
// worker holds, for the lease (its invocation died; chain.go). Applying it
// sends every scheduled step again (the output's Next holds them), ends
// the hold and moves the run's UpdatedAt, so the run's due time moves on
// by the stall period and its steps are sent again at most once per stall
// period; it emits no event. A run without a scheduled step, or updated
// more recently than RunState.StallDue allows, is ErrNothingToApply; a
// finished run ErrTerminal.
type StallResend struct{ Stall Stall }

// CallbackFailed reports that the delivery of a notification to the
// run's callback failed for good. Applying it emits a callback_failed
// event and changes nothing else; it applies to a run in any status,
// finished ones included.
type CallbackFailed struct {
	EventID    string
	Event      string
	Attempts   int
	LastStatus int
	LastError  string
}

func (CallbackFailed) isInput() {}

func (ToolsDiscovered) isInput() {}

func (ModelReplied) isInput() {}

func (ModelRetrying) isInput() {}

func (ToolRetrying) isInput() {}

func (Heartbeat) isInput() {}

func (StallResend) isInput() {}

func (ToolExecuted) isInput() {}

func (ToolDecided) isInput() {}

func (ClientResult) isInput() {}

func (ApprovalDecision) isInput() {}

func (Expire) isInput() {}

func (Compacted) isInput() {}

func (GuardrailDenied) isInput() {}

func (Steer) isInput() {}

func (SetCallback) isInput() {}

func (Cancel) isInput() {}

func (Interrupt) isInput() {}
