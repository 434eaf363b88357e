package hooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/toolspec"
)

// MediatorRequest is what a pre_tool_mediator hook gets for each tool
// call, just before the call would execute (or pause for a client). The
// parameters are the call's own, as a tool gets them: a hook is trusted
// operator configuration, like a tool. The transcript is not sent.
type MediatorRequest struct {
	Hook        string         `json:"hook"` // "pre_tool_mediator"
	RunID       string         `json:"run_id"`
	Agent       string         `json:"agent"`
	Turn        int            `json:"turn"`
	ToolName    string         `json:"tool_name"`
	ToolCallID  string         `json:"tool_call_id"`
	Parameters  map[string]any `json:"parameters"`
	Declaration DeclarationRef `json:"declaration"`
	// Principal is who the run acts for; absent when unknown.
	Principal *PrincipalRef `json:"principal,omitempty"`
	// PriorResults are the results already recorded in this turn.
	PriorResults   []core.ToolResult `json:"prior_results"`
	IdempotencyKey string            `json:"idempotency_key"`
}

// DeclarationRef names the called tool's declaration.
type DeclarationRef struct {
	Name   string `json:"name"`
	Source string `json:"source"`
}

// PrincipalRef is the run's principal as hooks see it.
type PrincipalRef struct {
	Tenant  string `json:"tenant,omitempty"`
	ActorID string `json:"actor_id,omitempty"`
}

// MediatorAnswer is a pre_tool_mediator hook's decision, as the seeds'
// pre_tool_mediator returns it: action "proceed" (also when absent),
// "reject" (a failed result carrying error; metadata.error_type, when
// set, is its error_type) or "replace_result" (result, an envelope with
// "success" or a bare value taken as a success, is the call's result);
// complete true stops the run once this call's result is appended.
type MediatorAnswer struct {
	Action   string         `json:"action,omitempty"`
	Error    string         `json:"error,omitempty"`
	Result   any            `json:"result,omitempty"`
	Complete bool           `json:"complete,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Mediator returns the pre-tool mediator that asks h, for the runs of
// agent. A call that fails or times out (or an answer with an unknown
// action) decides by onError: toolspec.OnErrorProceed lets the call
// proceed; anything else (toolspec.OnErrorReject, the default) rejects it
// with an error that says the hook failed. Failures are logged on log
// (nil: not logged) with their cause; the rejection the model sees does
// not name the endpoint.
func Mediator(h *Hook, agent, onError string, log *slog.Logger) core.PreToolMediator {
	log = orDiscard(log)
	return func(ctx context.Context, mc core.MediationContext) core.MediatorDecision {
		req := MediatorRequest{
			Hook: NameMediator, RunID: mc.RunID, Agent: agent, Turn: mc.Turn, ToolName: mc.ToolName, ToolCallID: mc.ToolCallID,
			Parameters: mc.Parameters, Declaration: DeclarationRef{Name: mc.Declaration.Name, Source: mc.Declaration.Source},
			PriorResults: mc.PriorMediated, IdempotencyKey: idempotencyKey(mc.RunID, mc.ToolCallID, NameMediator),
		}
		if req.Parameters == nil {
			req.Parameters = map[string]any{}
		}
		if req.PriorResults == nil {
			req.PriorResults = []core.ToolResult{}
		}
		if p := mc.Principal; p != nil {
			req.Principal = &PrincipalRef{Tenant: p.Tenant, ActorID: p.ActorID}
		}
		var a MediatorAnswer
		err := h.Call(ctx, req, req.IdempotencyKey, &a)
		if err == nil {
			switch a.Action {
			case "", core.MediatorProceed, core.MediatorReject, core.MediatorReplaceResult:
			default:
				err = fmt.Errorf("%s hook: invalid answer: action must be proceed, reject or replace_result, got %q", NameMediator, a.Action)
			}
		}
		if err != nil {
			log.WarnContext(ctx, "pre_tool_mediator hook failed", "run_id", mc.RunID, "agent", agent, "tool_name", mc.ToolName,
				"tool_call_id", mc.ToolCallID, "on_error", onError, "error", err.Error())
			if onError == toolspec.OnErrorProceed {
				return core.MediatorDecision{Action: core.MediatorProceed}
			}
			return core.MediatorDecision{Action: core.MediatorReject, Error: fmt.Sprintf("Tool call '%s' rejected: the pre-tool mediator hook %s", mc.ToolName, failure(err))}
		}
		return core.MediatorDecision{Action: a.Action, Error: a.Error, Result: a.Result, Complete: a.Complete, Metadata: a.Metadata}
	}
}

// failure says how a hook call failed, without naming its endpoint.
func failure(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	return "failed"
}

func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
