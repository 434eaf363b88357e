package core

import "time"

// Lifecycle event types. Each is stored with the run (Output.Events, the
// envelope's events[], the events endpoint and the stream) unless it says
// it is ephemeral. The §13.1 vocabulary of the agent-loop extensions seed
// is complete here: token, thinking, tool_call_start, tool_result,
// status, messages_updated, done, error and cancelled. Two of its events
// have a second, older name that the agents-api seed makes part of the
// envelope's public contract (its lifecycle events are turn_started,
// tool_call, tool_result, budget_exceeded, completed and failed), and
// both names are emitted: tool_call beside tool_call_start, completed
// beside done.
const (
	EventRunStarted = "run_started"
	// EventRunForked: the run is a fork of another run (fork.go),
	// emitted right after run_started. Data: forked_from (run_id, seq,
	// tools) and edited (the message at the fork point was replaced).
	EventRunForked   = "run_forked"
	EventTurnStarted = "turn_started"
	// EventToolCall (agents-api): the model asked for a tool call. It is
	// emitted, once per call in call order, by the transition that
	// applies the model's reply. Data: tool_name, tool_call_id and
	// parameters (redacted).
	EventToolCall = "tool_call"
	// EventToolCallStart (§13.1): a tool call's handling starts, before
	// it executes (or pauses for a client or an approval). It is emitted
	// by the transition that schedules the call's tool_call step: with
	// parallel_tool_calls the one that applies the model's reply, for
	// every call; otherwise the one that applies the previous call's
	// result (the reply's, for the first call). A call the run closes
	// before its step is scheduled (skipped after a budget trip or the
	// pre-tool mediator completing the run, cancelled while an earlier
	// call is pending) gets a tool_result without a tool_call_start.
	// Data: name, arguments (the redacted parameters as canonical JSON
	// text) and tool_call_id.
	EventToolCallStart = "tool_call_start"
	// EventToolResult (§13.1 and agents-api): a call's result was
	// appended to the transcript, after execution. Data: name and
	// tool_name (the tool), tool_call_id, success, error_type when it
	// failed, and result: the result message's text after the redaction
	// audit events get, at most EventResultMaxBytes (result_truncated is
	// true when it was cut, or when the stored result itself was
	// truncated: then result holds only its size, since the stored
	// preview is raw text redaction cannot see into).
	EventToolResult               = "tool_result"
	EventToolResultTruncated      = "tool_result_truncated"
	EventDuplicateToolCall        = "duplicate_tool_call"
	EventBudgetExceeded           = "budget_exceeded"
	EventMaxTurnsReached          = "max_turns_reached"
	EventCompletionPolicyStop     = "completion_policy_stop"
	EventCompletionPolicyContinue = "completion_policy_continue"
	EventMediatorComplete         = "pre_tool_mediator_complete"
	EventApprovalRequired         = "approval_required"
	EventApprovalDecided          = "approval_decided"
	EventRuntimeToolPending       = "runtime_tool_pending"
	EventRuntimeToolSubmitted     = "runtime_tool_result_submitted"
	EventPendingExpired           = "pending_expired"
	EventToolDeclarationsRejected = "tool_declarations_rejected"
	EventToolMediationDisabled    = "tool_mediation_disabled"
	EventToolPolicyResolved       = "tool_policy_resolved"
	EventCompactionStarted        = "compaction_started"
	EventCompactionCompleted      = "compaction_completed"
	EventCompactionFailed         = "compaction_failed"
	// EventGuardrailRedacted: a guardrail redacted text rather than deny
	// it. Data: guardrail ("input" or "output"), and for input messages,
	// how many messages of the model's view were redacted. An output
	// redaction replaced the reply's content before it was committed; an
	// input redaction changed only what the model saw this turn. The
	// event never carries the original text.
	EventGuardrailRedacted = "guardrail_redacted"
	// EventMessagesUpdated (§13.1): the message list changed. It follows
	// every append to the transcript after the run's start — a model
	// reply, a tool result, drained steering or continuation messages, a
	// compaction summary — and every trim of the model's view to the
	// context budget. Stored events carry no messages, so a step's writes
	// stay O(1): an append carries reason (see the Messages* constants)
	// and from_seq and to_seq, the sequence numbers of the first and
	// last message appended; a trim (reason context_trimmed) appends
	// nothing and carries dropped, kept and budget (the stored transcript
	// is unchanged; only the model's view was trimmed). The in-process
	// Runner hands its Sink the same event with messages added: the
	// session transcript through the event's append.
	EventMessagesUpdated = "messages_updated"
	// EventStatus (§13.1): a human-readable status update. Data: message.
	EventStatus = "status"
	// EventError (§13.1): a non-fatal error; the run goes on. A tool
	// executor that panics emits it (its call gets a failed
	// executor_exception result), as does a guardrail denial just before
	// the run fails. Data: message, and tool_name and tool_call_id for a
	// panic (guardrail for a denial).
	EventError          = "error"
	EventSteeringQueued = "steering_queued"
	// EventCancelled (§13.1): the run was cancelled. Data: reason.
	EventCancelled         = "cancelled"
	EventInterruptReceived = "interrupt_received"
	// EventCompleted (agents-api): the run finished other than by
	// failing. Data: status, completed (status is completed) and
	// turn_count. On a successful completion done follows it.
	EventCompleted = "completed"
	// EventDone (§13.1): the final response was produced; emitted only
	// when the run ends with status completed, as its last event, right
	// after completed. Data: response (the envelope's final_content).
	// The in-process Runner hands its Sink the same event with messages
	// added: the whole session transcript.
	EventDone   = "done"
	EventFailed = "failed"
	// EventModelRetry: a model call failed transiently (throttling, 5xx, a
	// network error) and the provider retries it after a wait. Data:
	// provider, attempt (the number of the attempt that failed, 1 for the
	// first), status (the HTTP status, 0 when no response arrived), code
	// (the provider's error code, "" when none) and wait (the backoff
	// before the next attempt, a Go duration string such as "1.5s").
	// Turn is the turn the call is for.
	EventModelRetry = "model_retry"
	// EventToolRetry: a tool call's execution failed transiently (a
	// remote agent that cannot be reached) and its step runs again when
	// the queue delivers it again. Data: tool_call_id, tool_name, attempt
	// (the delivery that failed, 1 for the first), attempts (the
	// deliveries in all before the failure is the call's result), reason
	// (the error, cut to 500 bytes) and wait (the time before the next
	// attempt, a Go duration string; "" when not known).
	EventToolRetry = "tool_retry"
	// EventCallbackFailed: Baton gave up delivering a notification to the
	// run's callback (webhook). Data: event_id (the notification's),
	// event (paused, finished or expired), attempts, last_status (the
	// last HTTP status, 0 when no response arrived) and last_error. It
	// may be emitted after the run finished, and more than once for one
	// event_id when a crash interrupts the giving up.
	EventCallbackFailed = "callback_failed"
	// EventChildRunStarted: an agent tool's call started its child run
	// (children.go). Data: tool_call_id, tool_name, child_run_id, agent.
	EventChildRunStarted = "child_run_started"
	// EventChildRunFinished: the child run answering a call ended; the
	// call's tool_result follows. Data: tool_call_id, tool_name,
	// child_run_id, agent, status, reason (when it did not complete).
	EventChildRunFinished = "child_run_finished"
	// EventToolsDiscovered: tools a tool source offers at run time (an
	// MCP server's, discovered by the worker) joined the run's catalog
	// before a model turn (ToolsDiscovered). Data: tools (the names
	// added), visible (those the model sees) and hidden ({name, reason},
	// as in tool_policy_resolved).
	EventToolsDiscovered = "tools_discovered"
	// EventToolSourceUnavailable: a tool source of the agent (an MCP
	// server) could not be reached, so its tools are absent from the
	// model's view. Data: source (mcp/<server>) and error. Emitted once
	// per source and run.
	EventToolSourceUnavailable = "tool_source_unavailable"
	// EventToken and EventThinking (§13.1) are ephemeral: a piece of the
	// model's output text or of its reasoning, as the provider streams
	// it. The in-process Runner hands them to its Sink while the model
	// call runs (unless the run's config says NoTokenStream), with Seq 0,
	// Turn the turn the call is for and data {"token": text}; they never
	// enter the run's events, the transcript or the envelope. A turn's
	// turn_started is committed with its reply, but stamped with the
	// time the model call began; when the turn streams, the sink gets a
	// turn_started (Seq 0) before the turn's first token instead of the
	// committed one, so a turn never shows tokens before its start.
	EventToken    = "token"
	EventThinking = "thinking"
)

// Reasons of a messages_updated event that reports an append.
const (
	MessagesModelReply     = "model_reply"       // the model's text and tool calls
	MessagesToolResult     = "tool_result"       // one tool result
	MessagesSteering       = "steering"          // drained steering messages
	MessagesContinuation   = "completion_policy" // drained completion-policy continuations
	MessagesCompaction     = "compaction"        // a compaction summary
	MessagesContextTrimmed = "context_trimmed"   // the model's view was trimmed; nothing appended
)

// EventResultMaxBytes bounds the result text of a tool_result event,
// below the run's ToolResultMaxBytes when that is smaller. Events repeat
// what the transcript holds in full, and many of them share one page of
// the events endpoint and one run view.
const EventResultMaxBytes = 16 << 10

// Event is one lifecycle event. Seq increases within a run in commit
// order. Data is the event type's struct (see EventData), or Fields for
// an event read back; it never holds raw tool parameters, only redacted
// copies.
type Event struct {
	Seq  int64     `json:"seq"`
	Type string    `json:"type"`
	Turn int       `json:"turn"`
	At   time.Time `json:"at"`
	Data EventData `json:"data,omitempty"`
}
