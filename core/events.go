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
	// EventModelRetry: a model call failed transiently (throttling, 5xx, a
	// network error) and the provider retries it after a wait. Data:
	// provider, attempt (the number of the attempt that failed, 1 for the
	// first), status (the HTTP status, 0 when no response arrived), code
	// (the provider's error code, "" when none) and wait (the backoff
	// before the next attempt, a Go duration string such as "1.5s").
	// Turn is the turn the call is for.
	EventModelRetry = "model_retry"
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
