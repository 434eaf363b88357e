package core

import (
	"encoding/json"
	"fmt"
	"time"
)

// EventData is the data of an event: a pointer to the struct of its type
// (TurnStartedData, ToolResultData, …) for an event the machine emits, or
// Fields, a generic JSON object, for an event read back from a store and
// for the data a caller supplies (an interrupt's metadata).
//
// A struct's fields are declared in the order of their JSON names, so an
// event encodes to the same bytes as its data read back as Fields: what
// a store writes, what the API sends and what an older record holds are
// byte for byte the same. Data is shared by every copy of its event (the
// output, the run's events, the sink) and must not be modified.
type EventData interface{ eventData() }

// Fields is generic event data: a JSON object whose numbers are
// json.Number when it was read back from JSON.
type Fields map[string]any

func (Fields) eventData() {}

// Fields returns the event's data as a generic JSON object, as a store
// would read it back (numbers as json.Number): Fields as they are, a
// typed struct through its JSON. It is nil when the event has no data.
// The edges that handle every event type alike (a notification, an
// adapter) read an event this way; the hot paths switch on the type.
func (e Event) Fields() Fields {
	switch d := e.Data.(type) {
	case nil:
		return nil
	case Fields:
		return d
	}
	b, err := marshalNoEscape(e.Data)
	if err != nil {
		return nil
	}
	var f map[string]any
	if decodeJSON(b, &f) != nil {
		return nil
	}
	return f
}

// UnmarshalJSON reads an event, its data as Fields (numbers as
// json.Number), so that it encodes again to the bytes it was read from.
func (e *Event) UnmarshalJSON(b []byte) error {
	var raw struct {
		Seq  int64           `json:"seq"`
		Type string          `json:"type"`
		Turn int             `json:"turn"`
		At   time.Time       `json:"at"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*e = Event{Seq: raw.Seq, Type: raw.Type, Turn: raw.Turn, At: raw.At}
	if len(raw.Data) == 0 || string(raw.Data) == "null" {
		return nil
	}
	var f map[string]any
	if err := decodeJSON(raw.Data, &f); err != nil {
		return fmt.Errorf("event %d (%s): data: %w", raw.Seq, raw.Type, err)
	}
	if len(f) > 0 {
		e.Data = Fields(f)
	}
	return nil
}

// The data of each event type the machine emits (see the Event*
// constants for what each means). Field order is JSON-name order.
type (
	// RunStartedData: run_started.
	RunStartedData struct {
		Agent             string   `json:"agent"`
		AgentVersion      string   `json:"agent_version,omitempty"`
		MaxTurns          int      `json:"max_turns"`
		ParallelToolCalls bool     `json:"parallel_tool_calls"`
		Tools             []string `json:"tools"`
	}
	// RunForkedData: run_forked.
	RunForkedData struct {
		Edited     bool    `json:"edited"`
		ForkedFrom ForkRef `json:"forked_from"`
	}
	// ToolPolicyResolvedData: tool_policy_resolved.
	ToolPolicyResolvedData struct {
		Hidden  []HiddenTool `json:"hidden"`
		Visible []string     `json:"visible"`
	}
	// ToolDeclarationsRejectedData: tool_declarations_rejected.
	ToolDeclarationsRejectedData struct {
		AcceptedCount int                   `json:"accepted_count"`
		Rejected      []RejectedDeclaration `json:"rejected"`
		RejectedCount int                   `json:"rejected_count"`
	}
	// ReasonData: cancelled and tool_mediation_disabled.
	ReasonData struct {
		Reason string `json:"reason"`
	}
	// CallbackFailedData: callback_failed.
	CallbackFailedData struct {
		Attempts   int    `json:"attempts"`
		Event      string `json:"event"`
		EventID    string `json:"event_id"`
		LastError  string `json:"last_error"`
		LastStatus int    `json:"last_status"`
	}
	// MessagesUpdatedData: messages_updated for an append (FromSeq
	// through ToSeq). Messages is set only on the copy the in-process
	// Runner hands its sink: the session transcript through ToSeq.
	MessagesUpdatedData struct {
		FromSeq  int64     `json:"from_seq"`
		Messages []Message `json:"messages,omitempty"`
		Reason   string    `json:"reason"`
		ToSeq    int64     `json:"to_seq"`
	}
	// ContextTrimmedData: messages_updated for a trim of the model's
	// view (reason context_trimmed). Messages, as for an append, is set
	// only on the sink's copy: the session transcript so far.
	ContextTrimmedData struct {
		Budget   int       `json:"budget"`
		Dropped  int       `json:"dropped"`
		Kept     int       `json:"kept"`
		Messages []Message `json:"messages,omitempty"`
		Reason   string    `json:"reason"`
	}
	// ToolCallStartData: tool_call_start.
	ToolCallStartData struct {
		Arguments  string `json:"arguments"`
		Name       string `json:"name"`
		ToolCallID string `json:"tool_call_id"`
	}
	// TurnStartedData: turn_started.
	TurnStartedData struct {
		// Chained: the turn ran in the invocation that committed the
		// step before it, not from a queue message (chain.go).
		Chained bool `json:"chained,omitempty"`
		Turn    int  `json:"turn"`
	}
	// StatusData: status.
	StatusData struct {
		Message string `json:"message"`
	}
	// GuardrailRedactedData: guardrail_redacted (Messages for input).
	GuardrailRedactedData struct {
		Guardrail string `json:"guardrail"`
		Messages  int    `json:"messages,omitempty"`
	}
	// ToolCallData: tool_call. Parameters are redacted.
	ToolCallData struct {
		Parameters map[string]any `json:"parameters"`
		ToolCallID string         `json:"tool_call_id"`
		ToolName   string         `json:"tool_name"`
	}
	// ModelRetryData: model_retry.
	ModelRetryData struct {
		Attempt  int    `json:"attempt"`
		Code     string `json:"code"`
		Provider string `json:"provider"`
		Status   int    `json:"status"`
		Wait     string `json:"wait"`
	}
	// ToolRetryData: tool_retry.
	ToolRetryData struct {
		Attempt    int    `json:"attempt"`
		Attempts   int    `json:"attempts"`
		Reason     string `json:"reason"`
		ToolCallID string `json:"tool_call_id"`
		ToolName   string `json:"tool_name"`
		Wait       string `json:"wait,omitempty"`
	}
	// ErrorData: error (Guardrail for a denial, the tool for a panic).
	ErrorData struct {
		Guardrail  string `json:"guardrail,omitempty"`
		Message    string `json:"message"`
		ToolCallID string `json:"tool_call_id,omitempty"`
		ToolName   string `json:"tool_name,omitempty"`
	}
	// CompactionStartedData: compaction_started.
	CompactionStartedData struct {
		CompactedThrough int64 `json:"compacted_through"`
		Messages         int   `json:"messages"`
	}
	// CompactionCompletedData: compaction_completed.
	CompactionCompletedData struct {
		CompactedCount   int            `json:"compacted_count"`
		CompactedThrough int64          `json:"compacted_through"`
		Model            string         `json:"model,omitempty"`
		Provider         string         `json:"provider,omitempty"`
		RetainedCount    int            `json:"retained_count"`
		Status           string         `json:"status"`
		SummaryChars     int            `json:"summary_chars"`
		Usage            map[string]any `json:"usage,omitempty"`
	}
	// CompactionFailedData: compaction_failed.
	CompactionFailedData struct {
		Error               string         `json:"error"`
		Model               string         `json:"model,omitempty"`
		Provider            string         `json:"provider,omitempty"`
		TranscriptPreserved bool           `json:"transcript_preserved"`
		Usage               map[string]any `json:"usage,omitempty"`
	}
	// ChildRunStartedData: child_run_started.
	ChildRunStartedData struct {
		Agent      string `json:"agent"`
		ChildRunID string `json:"child_run_id"`
		ToolCallID string `json:"tool_call_id"`
		ToolName   string `json:"tool_name"`
	}
	// ChildRunFinishedData: child_run_finished.
	ChildRunFinishedData struct {
		Agent      string `json:"agent"`
		ChildRunID string `json:"child_run_id"`
		Reason     string `json:"reason,omitempty"`
		Status     string `json:"status"`
		ToolCallID string `json:"tool_call_id"`
		ToolName   string `json:"tool_name"`
	}
	// ToolRefData: duplicate_tool_call and pre_tool_mediator_complete.
	ToolRefData struct {
		ToolCallID string `json:"tool_call_id"`
		ToolName   string `json:"tool_name"`
	}
	// RuntimeToolPendingData: runtime_tool_pending.
	RuntimeToolPendingData struct {
		ExpiresAt  string         `json:"expires_at"`
		Parameters map[string]any `json:"parameters"`
		RequestID  string         `json:"request_id"`
		ToolCallID string         `json:"tool_call_id"`
		ToolName   string         `json:"tool_name"`
	}
	// ApprovalRequiredData: approval_required.
	ApprovalRequiredData struct {
		ActionID   string         `json:"action_id"`
		ExpiresAt  string         `json:"expires_at"`
		Parameters map[string]any `json:"parameters"`
		Summary    string         `json:"summary"`
		ToolCallID string         `json:"tool_call_id"`
		ToolName   string         `json:"tool_name"`
	}
	// RuntimeToolSubmittedData: runtime_tool_result_submitted.
	RuntimeToolSubmittedData struct {
		RequestID  string `json:"request_id"`
		Success    bool   `json:"success"`
		ToolCallID string `json:"tool_call_id"`
		ToolName   string `json:"tool_name"`
	}
	// ApprovalDecidedData: approval_decided.
	ApprovalDecidedData struct {
		ActionID string `json:"action_id"`
		Decision string `json:"decision"`
		Reason   string `json:"reason,omitempty"`
		// Resolver is a map[string]string of the resolver's non-empty
		// fields, or nil.
		Resolver   any    `json:"resolver,omitempty"`
		ToolCallID string `json:"tool_call_id"`
		ToolName   string `json:"tool_name"`
	}
	// PendingExpiredData: pending_expired.
	PendingExpiredData struct {
		ID         string `json:"id"`
		Kind       string `json:"kind"`
		ToolCallID string `json:"tool_call_id"`
		ToolName   string `json:"tool_name"`
	}
	// ToolsDiscoveredData: tools_discovered.
	ToolsDiscoveredData struct {
		Hidden  []HiddenTool `json:"hidden"`
		Tools   []string     `json:"tools"`
		Visible []string     `json:"visible"`
	}
	// ToolSourceUnavailableData: tool_source_unavailable.
	ToolSourceUnavailableData struct {
		Error  string `json:"error"`
		Source string `json:"source"`
	}
	// SteeringQueuedData: steering_queued.
	SteeringQueuedData struct {
		Queued int `json:"queued"`
	}
	// ToolResultTruncatedData: tool_result_truncated.
	ToolResultTruncatedData struct {
		MaxBytes      int    `json:"max_bytes"`
		OriginalBytes int    `json:"original_bytes"`
		ToolCallID    string `json:"tool_call_id"`
		ToolName      string `json:"tool_name"`
	}
	// ToolResultData: tool_result. Name and ToolName both name the tool.
	ToolResultData struct {
		// Chained: the call's step ran in the invocation that committed
		// the step before it, not from a queue message (chain.go).
		Chained         bool   `json:"chained,omitempty"`
		ErrorType       string `json:"error_type,omitempty"`
		Name            string `json:"name"`
		Replayed        bool   `json:"replayed,omitempty"`
		Result          string `json:"result"`
		ResultTruncated bool   `json:"result_truncated,omitempty"`
		Success         bool   `json:"success"`
		ToolCallID      string `json:"tool_call_id"`
		ToolName        string `json:"tool_name"`
	}
	// CompletionPolicyData: completion_policy_stop and
	// completion_policy_continue.
	CompletionPolicyData struct {
		Context  map[string]any `json:"context,omitempty"`
		Message  string         `json:"message,omitempty"`
		ToolName string         `json:"tool_name"`
		Turn     int            `json:"turn"`
	}
	// BudgetExceededData: budget_exceeded (USD for cost_usd, a count
	// otherwise).
	BudgetExceededData struct {
		Budget  string  `json:"budget"`
		Ceiling float64 `json:"ceiling"`
		Current float64 `json:"current"`
	}
	// MaxTurnsReachedData: max_turns_reached.
	MaxTurnsReachedData struct {
		MaxTurns  int `json:"max_turns"`
		TurnCount int `json:"turn_count"`
	}
	// CompletedData: completed.
	CompletedData struct {
		Completed bool   `json:"completed"`
		Status    string `json:"status"`
		TurnCount int    `json:"turn_count"`
	}
	// DoneData: done. Messages is set only on the copy the in-process
	// Runner hands its sink: the whole transcript.
	DoneData struct {
		Messages []Message `json:"messages,omitempty"`
		Response string    `json:"response"`
	}
	// FailedData: failed.
	FailedData struct {
		Code  string `json:"code"`
		Error string `json:"error"`
	}
	// TokenData: the ephemeral token and thinking events.
	TokenData struct {
		Token string `json:"token"`
	}
)

func (*RunStartedData) eventData()               {}
func (*RunForkedData) eventData()                {}
func (*ToolPolicyResolvedData) eventData()       {}
func (*ToolDeclarationsRejectedData) eventData() {}
func (*ReasonData) eventData()                   {}
func (*CallbackFailedData) eventData()           {}
func (*ChildRunStartedData) eventData()          {}
func (*ChildRunFinishedData) eventData()         {}
func (*MessagesUpdatedData) eventData()          {}
func (*ContextTrimmedData) eventData()           {}
func (*ToolCallStartData) eventData()            {}
func (*TurnStartedData) eventData()              {}
func (*StatusData) eventData()                   {}
func (*GuardrailRedactedData) eventData()        {}
func (*ToolCallData) eventData()                 {}
func (*ModelRetryData) eventData()               {}
func (*ToolRetryData) eventData()                {}
func (*ErrorData) eventData()                    {}
func (*CompactionStartedData) eventData()        {}
func (*CompactionCompletedData) eventData()      {}
func (*CompactionFailedData) eventData()         {}
func (*ToolRefData) eventData()                  {}
func (*RuntimeToolPendingData) eventData()       {}
func (*ApprovalRequiredData) eventData()         {}
func (*RuntimeToolSubmittedData) eventData()     {}
func (*ApprovalDecidedData) eventData()          {}
func (*PendingExpiredData) eventData()           {}
func (*ToolsDiscoveredData) eventData()          {}
func (*ToolSourceUnavailableData) eventData()    {}
func (*SteeringQueuedData) eventData()           {}
func (*ToolResultTruncatedData) eventData()      {}
func (*ToolResultData) eventData()               {}
func (*CompletionPolicyData) eventData()         {}
func (*BudgetExceededData) eventData()           {}
func (*MaxTurnsReachedData) eventData()          {}
func (*CompletedData) eventData()                {}
func (*DoneData) eventData()                     {}
func (*FailedData) eventData()                   {}
func (*TokenData) eventData()                    {}
