package core

import (
	"context"
	"time"
)

// ModelProvider runs one model turn. Implementations live outside core
// (scripted, Bedrock, OpenAI-compatible, Anthropic). An error that may
// succeed on retry is wrapped with Retryable; any other error fails the run.
type ModelProvider interface {
	Complete(ctx context.Context, req ModelRequest) (ModelReply, error)
}

// Purposes of a model call (ModelRequest.Purpose).
const (
	// PurposeTurn is a model turn of the run: its reply is the
	// assistant's.
	PurposeTurn = ""
	// PurposeSummary is a compaction summary: System is the summary
	// prompt, Messages is one user message holding the part of the
	// transcript to condense (as text), Tools is empty, and the reply's
	// content is the summary. It is never streamed to clients.
	PurposeSummary = "summary"
	// PurposeMemoryExtraction is a run's memory extraction (package
	// memory): System is the extraction prompt, Messages is one user
	// message holding the run's user and assistant messages as data, a
	// JSON array of {"role", "content"} objects between the lines
	// <conversation> and </conversation> (after, between <memories> and
	// </memories>, the stored memories it shows, {"id", "text"} each),
	// Tools is empty, and the reply's content is JSON: {"facts":
	// [{"text", "replaces"?}], "summary"?}. It is never streamed to
	// clients.
	PurposeMemoryExtraction = "memory_extraction"
)

// ModelRequest is what one model call sees: a model turn, or a
// compaction summary when Purpose says so.
type ModelRequest struct {
	RunID     string `json:"run_id"`
	SessionID string `json:"session_id"`
	// Turn is the run's turn the call is for (a summary's is the turn it
	// is written before).
	Turn  int       `json:"turn"`
	Model ModelSpec `json:"model"`
	// AgentVersion is the agents file version of the run (errors name
	// it: a version whose provider this deployment lacks).
	AgentVersion      string            `json:"agent_version,omitempty"`
	System            string            `json:"system,omitempty"`
	Messages          []Message         `json:"messages"`
	Tools             []ToolDeclaration `json:"tools,omitempty"`
	ParallelToolCalls bool              `json:"parallel_tool_calls,omitempty"`
	// Purpose is PurposeTurn, PurposeSummary or PurposeMemoryExtraction.
	// A provider answers them all the same way; the scripted provider
	// answers a summary or an extraction without consuming a scripted
	// turn.
	Purpose string `json:"purpose,omitempty"`
	// Summarizes is, on a summary request, the number of transcript
	// messages the summary condenses.
	Summarizes int `json:"summarizes,omitempty"`
	// Trim is set when the messages were trimmed to the context budget:
	// a ContextCompactor may rewrite the summary at Trim.SummaryIndex.
	Trim *TrimResult `json:"-"`
}

// ModelRetry describes one in-process retry of a model call: the attempt
// that failed (1 for the first), its HTTP status (0 when no response
// arrived), the provider's error code, and the wait before the next
// attempt.
type ModelRetry struct {
	Provider string
	Attempt  int
	Status   int
	Code     string
	Wait     time.Duration
}

// modelRetryKey and toolRetryKey are the context keys of the retry
// observers.
type (
	modelRetryKey struct{}
	toolRetryKey  struct{}
)

// WithModelRetryObserver returns a context that carries observe: a
// provider's retry loop calls it (through NotifyModelRetry) before each
// wait between attempts of one model call. Like net/http/httptrace, the
// observer travels in the context of the call because the retry loop
// sees only that context. observe runs synchronously on the caller's
// goroutine and must not block for long.
func WithModelRetryObserver(ctx context.Context, observe func(ModelRetry)) context.Context {
	return withObserver(ctx, modelRetryKey{}, observe)
}

// NotifyModelRetry calls the observer ctx carries, if any, swallowing
// its panics: observers never change a model call.
func NotifyModelRetry(ctx context.Context, r ModelRetry) { notify(ctx, modelRetryKey{}, r) }

// ToolRetry describes a tool call's execution that failed transiently
// and is tried again by a later delivery of its step: the delivery that
// failed (1 for the first) of Attempts, why, and the wait before the
// next one (0 when not known).
type ToolRetry struct {
	Attempt, Attempts int
	Reason            string
	Wait              time.Duration
}

// WithToolRetryObserver returns a context that carries observe: a tool
// executor that gives a call up to a later delivery of its step calls
// it (through NotifyToolRetry) first, as WithModelRetryObserver.
func WithToolRetryObserver(ctx context.Context, observe func(ToolRetry)) context.Context {
	return withObserver(ctx, toolRetryKey{}, observe)
}

// NotifyToolRetry calls the tool retry observer ctx carries, if any,
// swallowing its panics.
func NotifyToolRetry(ctx context.Context, r ToolRetry) { notify(ctx, toolRetryKey{}, r) }

func withObserver[T any](ctx context.Context, key any, observe func(T)) context.Context {
	if observe == nil {
		return ctx
	}
	return context.WithValue(ctx, key, observe)
}

func notify[T any](ctx context.Context, key any, v T) {
	observe, _ := ctx.Value(key).(func(T))
	if observe == nil {
		return
	}
	defer func() { _ = recover() }()
	observe(v)
}

// ModelReply is the outcome of one model turn. The run keeps its maps
// (a tool call's parameters, usage, request metadata) as they are: a
// provider hands over maps of its own and never changes them afterwards.
type ModelReply struct {
	Content         string            `json:"content"`
	ToolCalls       []ToolCallRequest `json:"tool_calls,omitempty"`
	Usage           map[string]any    `json:"usage,omitempty"`
	RequestMetadata map[string]any    `json:"request_metadata,omitempty"`
	StopReason      string            `json:"stop_reason,omitempty"`
}

// ToolCallRequest is one tool call proposed by the model.
type ToolCallRequest struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	Parameters map[string]any `json:"parameters"`
}

// ToolExecutor executes a server tool call. The output is JSON-friendly:
// an object with a boolean "success" is taken as a result envelope
// (success, result, error, error_type, metadata, runtime); anything else is
// wrapped as a successful result. A returned error or a panic becomes a
// failed result with error_type executor_exception.
type ToolExecutor interface {
	Execute(ctx context.Context, call ToolCall) (any, error)
}

// ToolSource offers tools discovered at run time (the MCP servers of an
// agent) for the runs of agent on behalf of tenant. It never fails: a
// source that cannot be reached is reported in Unavailable. The durable
// runner applies its answer before each model turn.
type ToolSource interface {
	Discover(ctx context.Context, agent, tenant string) ToolsDiscovered
}

// ToolExecutorFunc adapts a function to ToolExecutor.
type ToolExecutorFunc func(ctx context.Context, call ToolCall) (any, error)

// Execute calls f.
func (f ToolExecutorFunc) Execute(ctx context.Context, call ToolCall) (any, error) {
	return f(ctx, call)
}

// ToolCall is a prepared call handed to a ToolExecutor.
type ToolCall struct {
	RunID          string          `json:"run_id"`
	SessionID      string          `json:"session_id"`
	Agent          string          `json:"agent,omitempty"`
	Turn           int             `json:"turn"`
	ToolCallID     string          `json:"tool_call_id"`
	ToolName       string          `json:"tool_name"`
	Parameters     map[string]any  `json:"parameters"`
	IdempotencyKey string          `json:"idempotency_key"`
	Declaration    ToolDeclaration `json:"declaration"`
	Principal      *Principal      `json:"principal,omitempty"`
	// Tenant is the run's tenant, set by the durable runner (tool
	// credentials may differ per tenant).
	Tenant string `json:"tenant,omitempty"`
	// Remote, on a call to a remote agent tool, is the call's remote
	// task as far as it is known: with a TaskID the executor follows that
	// task and never sends the first message again; with a Reply it sends
	// that follow-up first (remote.go).
	Remote *RemoteTask `json:"remote,omitempty"`
	// Memory, on a call of a memory tool, is the run's memory policy
	// (its scope's subject), and RunStarted when the run began (an
	// erasure after it refuses the call's writes).
	Memory     *MemoryPolicy `json:"memory,omitempty"`
	RunStarted time.Time     `json:"run_started,omitzero"`
	// AgentVersion, on a call of a memory tool, is the run's agent
	// version (whose embedder the memory uses).
	AgentVersion string `json:"agent_version,omitempty"`
}

// Clock is the machine's only source of time.
type Clock interface {
	Now() time.Time
}

// SystemClock reads the wall clock in UTC.
type SystemClock struct{}

// Now returns the current UTC time.
func (SystemClock) Now() time.Time { return time.Now().UTC() }

// FixedClock always returns T; tests move it by assigning T.
type FixedClock struct{ T time.Time }

// Now returns c.T.
func (c *FixedClock) Now() time.Time { return c.T }

// IDSource mints identifiers (run ids, session ids).
type IDSource interface {
	NewID(prefix string) string
}

// EventSink observes lifecycle events as they are produced. Its errors and
// panics are swallowed by the runners: observers never change a run.
type EventSink interface {
	Emit(ctx context.Context, ev Event) error
}

// EventSinkFunc adapts a function to EventSink.
type EventSinkFunc func(ctx context.Context, ev Event) error

// Emit calls f.
func (f EventSinkFunc) Emit(ctx context.Context, ev Event) error { return f(ctx, ev) }

// EmitSafely delivers ev to sink, swallowing errors and panics.
func EmitSafely(ctx context.Context, sink EventSink, ev Event) {
	if sink == nil {
		return
	}
	defer func() { _ = recover() }()
	_ = sink.Emit(ctx, ev)
}
