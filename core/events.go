package core

import "time"

// Lifecycle event types.
const (
	EventRunStarted               = "run_started"
	EventTurnStarted              = "turn_started"
	EventToolCall                 = "tool_call"
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
	EventMessagesUpdated          = "messages_updated"
	EventStatus                   = "status"
	EventError                    = "error"
	EventSteeringQueued           = "steering_queued"
	EventCancelled                = "cancelled"
	EventInterruptReceived        = "interrupt_received"
	EventCompleted                = "completed"
	EventFailed                   = "failed"
)

// Event is one lifecycle event. Seq increases within a run in commit
// order. Data never holds raw tool parameters: only redacted copies.
type Event struct {
	Seq  int64          `json:"seq"`
	Type string         `json:"type"`
	Turn int            `json:"turn"`
	At   time.Time      `json:"at"`
	Data map[string]any `json:"data,omitempty"`
}

// ToolResult is a normalized tool result.
type ToolResult struct {
	Success   bool           `json:"success"`
	ToolName  string         `json:"tool_name"`
	Result    any            `json:"result,omitempty"`
	Error     string         `json:"error,omitempty"`
	ErrorType string         `json:"error_type,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	Runtime   map[string]any `json:"runtime,omitempty"`
}

// Tool result error types.
const (
	ErrTypeToolNotFound      = "tool_not_found"
	ErrTypeMissingParameters = "missing_required_parameters"
	ErrTypeInvalidParameters = "invalid_parameters"
	ErrTypeExecutorException = "executor_exception"
	ErrTypeDuplicateToolCall = "duplicate_tool_call"
	ErrTypeTimedOut          = "timed_out"
	ErrTypeInDoubt           = "in_doubt"
	ErrTypeRejected          = "rejected"
	ErrTypeGuardrailDenied   = "guardrail_denied"
	ErrTypeForbidden         = "forbidden"
	ErrTypeCancelled         = "cancelled"
	ErrTypeSkipped           = "skipped"
	ErrTypeClientError       = "client_error"
	ErrTypeMediatorRejected  = "mediator_rejected"
)

// ToolExecutionResult is the raw, caller-owned record of one mediated
// call (raw parameters included).
type ToolExecutionResult struct {
	ToolName   string         `json:"tool_name"`
	ToolCallID string         `json:"tool_call_id"`
	Parameters map[string]any `json:"parameters"`
	Result     ToolResult     `json:"result"`
	Runtime    map[string]any `json:"runtime,omitempty"`
	TurnCount  int            `json:"turn_count"`
	// ResultRef, when set, says the record was stored without its result
	// body because the call's tool_result message holds the same bytes:
	// "message_text" (the result is the message's text) or "message_json"
	// (the message's text is the result's canonical JSON). Readers restore
	// the body and clear it; it never appears in an envelope.
	ResultRef string `json:"result_ref,omitempty"`
	// Seq is the sequence number of the call's tool_result message; stores
	// key the record by it.
	Seq int64 `json:"-"`
}

// AuditEvent is the safe replay record of one tool call: hashes and
// status, never raw parameters.
type AuditEvent struct {
	SchemaVersion      int    `json:"schema_version"`
	Type               string `json:"type"`
	TurnCount          int    `json:"turn_count"`
	ToolName           string `json:"tool_name"`
	ToolCallID         string `json:"tool_call_id"`
	ToolSource         string `json:"tool_source"`
	Executor           string `json:"executor"`
	ParametersSHA256   string `json:"parameters_sha256"`
	ParametersRedacted bool   `json:"parameters_redacted"`
	Success            bool   `json:"success"`
	ResultStatus       string `json:"result_status"`
	ResultSHA256       string `json:"result_sha256"`
	ErrorType          string `json:"error_type,omitempty"`
	// Seq is the sequence number of the call's tool_result message.
	Seq int64 `json:"-"`
}
