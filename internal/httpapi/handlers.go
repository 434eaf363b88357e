package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/baton-agents/baton/core"

	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/durable"
)

var (
	sessionIDRe = regexp.MustCompile(`^[A-Za-z0-9._:\-]{1,128}$`)
	runIDRe     = regexp.MustCompile(`^[A-Za-z0-9._:\-]{1,128}$`)
)

// Limits on a start request.
const (
	maxMessages      = 1000
	maxTools         = 128
	maxMetadataBytes = 16 << 10
)

type startBody struct {
	Agent             string           `json:"agent"`
	SessionID         *string          `json:"session_id"`
	Messages          []any            `json:"messages"`
	Tools             []map[string]any `json:"tools"`
	Model             *core.ModelSpec  `json:"model"`
	MaxTurns          *int             `json:"max_turns"`
	Budgets           map[string]int   `json:"budgets"`
	ContextBudget     *int             `json:"context_budget"`
	ParallelToolCalls *bool            `json:"parallel_tool_calls"`
	StreamTokens      *bool            `json:"stream_tokens"`
	Metadata          map[string]any   `json:"metadata"`
	// Callback is checked by the agent (agents.Agent.RunConfig).
	Callback *agents.CallbackRequest `json:"callback"`
}

func (a *API) startRun(ctx context.Context, r *request, _ []string) (int, any, error) {
	var b startBody
	if err := decodeStrict(r.body, &b, false); err != nil {
		return 0, nil, err
	}
	if strings.TrimSpace(b.Agent) == "" {
		return 0, nil, errf(400, "invalid_request", "agent is required")
	}
	req := durable.StartRequest{Agent: b.Agent, Metadata: b.Metadata}
	if b.SessionID != nil {
		if !sessionIDRe.MatchString(*b.SessionID) {
			return 0, nil, errf(400, "invalid_request", "session_id must be 1 to 128 letters, digits or . _ : -")
		}
		req.SessionID = *b.SessionID
	}
	if len(b.Messages) == 0 {
		return 0, nil, errf(400, "invalid_request", "messages must hold at least one message")
	}
	if len(b.Messages) > maxMessages {
		return 0, nil, errf(400, "invalid_request", "at most %d messages per request", maxMessages)
	}
	msgs, err := core.NormalizeMessages(b.Messages)
	if err != nil {
		return 0, nil, errf(400, "invalid_message", "%v", err)
	}
	req.Messages = msgs
	if len(b.Tools) > maxTools {
		return 0, nil, errf(400, "invalid_tool_declaration", "at most %d tools per request", maxTools)
	}
	for i, t := range b.Tools {
		name, _ := t["name"].(string)
		if !strings.HasPrefix(name, "client/") {
			return 0, nil, &apiError{Status: 400, Code: "invalid_tool_declaration",
				Message: fmt.Sprintf("tools[%d]: callers may declare only client/* tools, got %q", i, name), Details: map[string]any{"index": i}}
		}
		if _, rej := core.NormalizeRequestTools([]any{t}); len(rej) > 0 {
			return 0, nil, &apiError{Status: 400, Code: "invalid_tool_declaration",
				Message: fmt.Sprintf("tools[%d] (%s): %s", i, name, rej[0].Reason), Details: map[string]any{"index": i}}
		}
		req.RequestTools = append(req.RequestTools, t)
	}
	if b.Model != nil {
		if !a.providerEnabled(b.Model.Provider) {
			return 0, nil, errf(400, "provider_not_enabled", "model provider %q is not enabled in this deployment (enabled: %s)", b.Model.Provider, strings.Join(a.Config.Providers, ", "))
		}
		req.Overrides.Model = b.Model
	}
	req.Overrides.MaxTurns = b.MaxTurns
	req.Overrides.Budgets = b.Budgets
	req.Overrides.ContextBudget = b.ContextBudget
	req.Overrides.ParallelToolCalls = b.ParallelToolCalls
	req.Overrides.StreamTokens = b.StreamTokens
	req.Overrides.Callback = b.Callback
	if b.MaxTurns != nil && (*b.MaxTurns < 1 || *b.MaxTurns > 1000) {
		return 0, nil, errf(400, "invalid_request", "max_turns must be between 1 and 1000")
	}
	if b.ContextBudget != nil && *b.ContextBudget < 0 {
		return 0, nil, errf(400, "invalid_request", "context_budget must not be negative")
	}
	if b.Metadata != nil {
		if mb, _ := json.Marshal(b.Metadata); len(mb) > maxMetadataBytes {
			return 0, nil, errf(400, "invalid_request", "metadata is larger than %d bytes", maxMetadataBytes)
		}
	}
	if agent, ok := a.Runner.Agents.Get(b.Agent); ok && b.Model == nil && !a.providerEnabled(agent.Spec.Model.Provider) {
		return 0, nil, errf(400, "provider_not_enabled", "agent %s uses model provider %q, which is not enabled in this deployment", b.Agent, agent.Spec.Model.Provider)
	}
	caller, err := core.ParseCallerContext(r.Headers, r.RequestContext.RequestID, core.MaxChainDepth)
	if err != nil {
		return 0, nil, errf(400, "invalid_caller_context", "%v", err)
	}
	req.Principal = r.principal()
	req.Principal.AgentID, req.Principal.Caller = b.Agent, caller
	rec, err := a.Runner.Start(ctx, r.tenant, req)
	if err != nil {
		return 0, nil, err
	}
	return a.view(ctx, http.StatusAccepted, rec)
}

func (a *API) providerEnabled(p string) bool {
	for _, q := range a.Config.Providers {
		if q == p {
			return true
		}
	}
	return false
}

func (a *API) view(ctx context.Context, status int, rec durable.Snapshot) (int, any, error) {
	v, err := a.Runner.View(ctx, rec, a.Config.MaxViewBytes)
	if err != nil {
		return 0, nil, err
	}
	return status, v, nil
}

func checkRunID(id string) error {
	if !runIDRe.MatchString(id) {
		return errf(404, "not_found", "no such run")
	}
	return nil
}

// runWait checks the run id and reads the ?wait= long-poll duration.
func (a *API) runWait(r *request, id string) (time.Duration, error) {
	if err := checkRunID(id); err != nil {
		return 0, err
	}
	n, err := intQuery(r, "wait", 0, 0, int(a.Config.MaxWait/time.Second))
	return time.Duration(n) * time.Second, err
}

// pageParams reads the ?after= cursor and ?limit= page size of a paged read.
func pageParams(r *request) (after int64, limit int, err error) {
	n, err := intQuery(r, "after", 0, 0, 0)
	if err != nil {
		return 0, 0, err
	}
	limit, err = intQuery(r, "limit", 100, 1, 1000)
	return int64(n), limit, err
}

func (a *API) getRun(ctx context.Context, r *request, p []string) (int, any, error) {
	wait, err := a.runWait(r, p[0])
	if err != nil {
		return 0, nil, err
	}
	rec, err := a.Runner.Wait(ctx, r.tenant, p[0], wait)
	if err != nil {
		return 0, nil, err
	}
	return a.view(ctx, http.StatusOK, rec)
}

func (a *API) getEvents(ctx context.Context, r *request, p []string) (int, any, error) {
	wait, err := a.runWait(r, p[0])
	if err != nil {
		return 0, nil, err
	}
	after, limit, err := pageParams(r)
	if err != nil {
		return 0, nil, err
	}
	evs, err := a.Runner.Events(ctx, r.tenant, p[0], after, limit, wait)
	if err != nil {
		return 0, nil, err
	}
	next := after
	if n := len(evs); n > 0 {
		next = evs[n-1].Seq
	}
	if evs == nil {
		evs = []core.Event{}
	}
	return http.StatusOK, map[string]any{"events": evs, "next": next}, nil
}

type pagedMessage struct {
	Seq int64 `json:"seq"`
	core.Message
}

// MarshalJSON flattens seq into the message envelope.
func (m pagedMessage) MarshalJSON() ([]byte, error) {
	b, err := m.Message.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return append([]byte(fmt.Sprintf(`{"seq":%d,`, m.Seq)), b[1:]...), nil
}

func (a *API) getMessages(ctx context.Context, r *request, p []string) (int, any, error) {
	if err := checkRunID(p[0]); err != nil {
		return 0, nil, err
	}
	after, limit, err := pageParams(r)
	if err != nil {
		return 0, nil, err
	}
	msgs, err := a.Runner.Messages(ctx, r.tenant, p[0], after, limit)
	if err != nil {
		return 0, nil, err
	}
	out := make([]pagedMessage, len(msgs))
	next := after
	for i, m := range msgs {
		out[i] = pagedMessage{Seq: m.Seq, Message: m}
		next = m.Seq
	}
	return http.StatusOK, map[string]any{"messages": out, "next": next}, nil
}

// applyPost is the shape of every POST on a run: check the ids, decode
// the body strictly, turn it into a core input, apply it, answer 202 with
// the view.
func (a *API) applyPost(ctx context.Context, r *request, ids []string, body any, optional bool, input func() (core.Input, error)) (int, any, error) {
	for _, id := range ids {
		if err := checkRunID(id); err != nil {
			return 0, nil, err
		}
	}
	if err := decodeStrict(r.body, body, optional); err != nil {
		return 0, nil, err
	}
	in, err := input()
	if err != nil {
		return 0, nil, err
	}
	rec, err := a.Runner.Apply(ctx, r.tenant, ids[0], in)
	if err != nil {
		return 0, nil, err
	}
	return a.view(ctx, http.StatusAccepted, rec)
}

type resultBody struct {
	RequestID string `json:"request_id"`
	Success   *bool  `json:"success"`
	Result    any    `json:"result"`
	Error     string `json:"error"`
}

func (a *API) submitResult(ctx context.Context, r *request, p []string) (int, any, error) {
	var b resultBody
	return a.applyPost(ctx, r, p, &b, false, func() (core.Input, error) {
		switch {
		case b.RequestID == "" || b.Success == nil:
			return nil, errf(400, "invalid_request", "request_id and success are required")
		case *b.Success && b.Error != "":
			return nil, errf(400, "invalid_request", "error is only allowed when success is false")
		case !*b.Success && b.Result != nil:
			return nil, errf(400, "invalid_request", "result is only allowed when success is true")
		}
		return core.ClientResult{RequestID: b.RequestID, Success: *b.Success, Result: b.Result, Error: b.Error}, nil
	})
}

type approvalBody struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

func (a *API) approve(ctx context.Context, r *request, p []string) (int, any, error) {
	var b approvalBody
	return a.applyPost(ctx, r, p, &b, false, func() (core.Input, error) {
		if b.Decision != "accept" && b.Decision != "reject" {
			return nil, errf(400, "invalid_request", "decision must be \"accept\" or \"reject\"")
		}
		return core.ApprovalDecision{ActionID: p[1], Decision: b.Decision, Reason: b.Reason, Resolver: r.principal()}, nil
	})
}

type cancelBody struct {
	Reason string `json:"reason"`
}

func (a *API) cancel(ctx context.Context, r *request, p []string) (int, any, error) {
	var b cancelBody
	return a.applyPost(ctx, r, p, &b, true, func() (core.Input, error) { return core.Cancel{Reason: b.Reason}, nil })
}

type steerBody struct {
	Content *string `json:"content"`
}

func (a *API) steer(ctx context.Context, r *request, p []string) (int, any, error) {
	var b steerBody
	return a.applyPost(ctx, r, p, &b, false, func() (core.Input, error) {
		if b.Content == nil {
			return nil, errf(400, "invalid_request", "content is required")
		}
		return core.Steer{Content: *b.Content}, nil
	})
}
