package hooks

import (
	"context"
	"log/slog"

	"github.com/baton-agents/baton/core"
)

// CompletionRequest is what a completion_policy hook gets after each
// mediated tool result is recorded.
type CompletionRequest struct {
	Hook           string          `json:"hook"` // "completion_policy"
	RunID          string          `json:"run_id"`
	Agent          string          `json:"agent"`
	Turn           int             `json:"turn"`
	ToolName       string          `json:"tool_name"`
	ToolCallID     string          `json:"tool_call_id"`
	Result         core.ToolResult `json:"result"`
	IdempotencyKey string          `json:"idempotency_key"`
}

// CompletionAnswer is a completion_policy hook's decision: complete true
// stops the run after the current turn (a completion_policy_stop event);
// otherwise a non-empty message is added as a user continuation message
// (a completion_policy_continue event), and an empty one changes nothing.
// Context is caller-owned data carried in the event.
type CompletionAnswer struct {
	Complete bool           `json:"complete,omitempty"`
	Message  string         `json:"message,omitempty"`
	Context  map[string]any `json:"context,omitempty"`
}

// Completion returns the completion policy that asks h, for the runs of
// agent. A call that fails or times out makes no decision (the loop
// continues) and is logged on log (nil: not logged).
func Completion(h *Hook, agent string, log *slog.Logger) core.CompletionPolicy {
	log = orDiscard(log)
	return func(ctx context.Context, cc core.CompletionContext) core.CompletionDecision {
		req := CompletionRequest{Hook: NameCompletion, RunID: cc.RunID, Agent: agent, Turn: cc.Turn, ToolName: cc.ToolName, ToolCallID: cc.ToolCallID,
			Result: cc.Result, IdempotencyKey: idempotencyKey(cc.RunID, cc.ToolCallID, NameCompletion)}
		var a CompletionAnswer
		if err := h.Call(ctx, req, req.IdempotencyKey, &a); err != nil {
			log.WarnContext(ctx, "completion_policy hook failed; no decision", "run_id", cc.RunID, "agent", agent, "tool_name", cc.ToolName,
				"tool_call_id", cc.ToolCallID, "error", err.Error())
			return core.CompletionDecision{}
		}
		return core.CompletionDecision{Complete: a.Complete, Message: a.Message, Context: a.Context}
	}
}
