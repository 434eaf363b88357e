package a2aserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/runspec"
)

// send applies a message: a new task (a run), or an answer to the task
// it names. It returns the run and the event seq a stream of it starts
// after.
func (h Handler) send(ctx context.Context, req *a2a.SendMessageRequest) (durable.Snapshot, int64, error) {
	m := req.Message
	switch {
	case m == nil:
		return durable.Snapshot{}, 0, a2a.NewError(a2a.ErrInvalidParams, "message is required")
	case strings.TrimSpace(m.ID) == "":
		return durable.Snapshot{}, 0, a2a.NewError(a2a.ErrInvalidParams, "message.messageId is required")
	case m.Role != a2a.MessageRoleUser:
		return durable.Snapshot{}, 0, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("message.role must be %s, got %q", a2a.MessageRoleUser, m.Role))
	case len(m.Parts) == 0:
		return durable.Snapshot{}, 0, a2a.NewError(a2a.ErrInvalidParams, "message.parts must hold at least one part")
	}
	for i, p := range m.Parts {
		switch p.Content.(type) {
		case a2a.Text, a2a.Data:
		default:
			return durable.Snapshot{}, 0, a2a.NewError(a2a.ErrUnsupportedContentType, fmt.Sprintf("message.parts[%d]: this agent takes text and data parts (text/plain, application/json), not files", i))
		}
	}
	if m.TaskID != "" {
		return h.answer(ctx, m)
	}
	return h.start(ctx, req)
}

// start starts the run of a new message, or finds the run an earlier
// delivery of the same message started: its id derives from the
// tenant, the agent and the messageId.
func (h Handler) start(ctx context.Context, req *a2a.SendMessageRequest) (durable.Snapshot, int64, error) {
	c := callerOf(ctx)
	m := req.Message
	runID := core.MessageRunID(c.Tenant, c.Agent, m.ID)
	if snap, err := h.Runner.Get(ctx, c.Tenant, runID); err == nil {
		return snap, 0, nil // the message was delivered before
	} else if !errors.Is(err, core.ErrNotFound) {
		return durable.Snapshot{}, 0, h.rpcError(ctx, err)
	}
	session := m.ContextID
	if session == "" {
		session = core.MessageSessionID(c.Tenant, c.Agent, m.ID)
	}
	body := runspec.Body{Agent: c.Agent, SessionID: &session,
		Messages: []any{map[string]any{"role": core.RoleUser, "content": messageText(m.Parts)}},
		Metadata: map[string]any{"a2a_message_id": m.ID}}
	if err := overrides(m.Metadata, &body); err != nil {
		return durable.Snapshot{}, 0, err
	}
	if req.Config != nil && req.Config.PushConfig != nil {
		cr, err := h.pushRequest(ctx, req.Config.PushConfig)
		if err != nil {
			return durable.Snapshot{}, 0, err
		}
		body.Callback = cr
	}
	sreq, err := h.Validator.Request(body)
	if err != nil {
		return durable.Snapshot{}, 0, h.rpcError(ctx, err)
	}
	sreq.RunID = runID
	p := core.Principal{}
	if c.Principal != nil {
		p = *c.Principal
	}
	p.RequestContext, p.AgentID = "a2a", c.Agent
	sreq.Principal = &p
	snap, err := h.Runner.Start(ctx, c.Tenant, sreq)
	if err != nil {
		if again, gerr := h.Runner.Get(ctx, c.Tenant, runID); gerr == nil {
			return again, 0, nil // a concurrent delivery of the message started it
		}
		if errors.Is(err, durable.ErrSessionBusy) {
			return durable.Snapshot{}, 0, a2a.NewError(a2a.ErrUnsupportedOperation,
				fmt.Sprintf("context %s has an unfinished task; answer it (a message with its taskId), cancel it, or wait for it to end", session))
		}
		return durable.Snapshot{}, 0, h.rpcError(ctx, err)
	}
	return snap, 0, nil
}

// overrides reads message.metadata.baton: POST /v1/runs' overrides.
func overrides(meta map[string]any, b *runspec.Body) error {
	raw, ok := meta["baton"]
	if !ok {
		return nil
	}
	var o runspec.Overrides
	enc, err := json.Marshal(raw)
	if err == nil {
		err = runspec.Decode(enc, &o, false)
	}
	o.Apply(b)
	if err != nil {
		var re *runspec.Error
		msg := err.Error()
		if errors.As(err, &re) {
			msg = re.Message
		}
		return a2a.NewError(a2a.ErrInvalidParams, "message.metadata.baton: "+msg+" (it may hold model, max_turns, budgets, context_budget, parallel_tool_calls)")
	}
	return nil
}

// messageText is the user message of parts: the text parts, and each
// data part as JSON, in order, separated by blank lines.
func messageText(parts a2a.ContentParts) string {
	var out []string
	for _, p := range parts {
		switch c := p.Content.(type) {
		case a2a.Text:
			out = append(out, string(c))
		case a2a.Data:
			b, _ := json.Marshal(c.Value)
			out = append(out, string(b))
		}
	}
	return strings.Join(out, "\n\n")
}

// reply is what a message on a task says: approval decisions, client
// tool results, or text that steers the run.
type reply struct {
	all       *decision // {"decision": …}: every pending approval
	decisions []decision
	results   []toolResult
	text      string
}

type decision struct {
	ActionID string `json:"action_id"`
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

type toolResult struct {
	RequestID string `json:"request_id"`
	Success   *bool  `json:"success"`
	Result    any    `json:"result"`
	Error     string `json:"error"`
}

// readReply reads a message on a task.
func readReply(parts a2a.ContentParts) (reply, error) {
	var r reply
	var texts []string
	for i, p := range parts {
		switch c := p.Content.(type) {
		case a2a.Text:
			texts = append(texts, string(c))
		case a2a.Data:
			b, _ := json.Marshal(c.Value)
			var d struct {
				Decision    string       `json:"decision"`
				Reason      string       `json:"reason"`
				Decisions   []decision   `json:"decisions"`
				ToolResults []toolResult `json:"tool_results"`
			}
			if err := runspec.Decode(b, &d, false); err != nil {
				var re *runspec.Error
				msg := err.Error()
				if errors.As(err, &re) {
					msg = re.Message
				}
				return r, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("message.parts[%d].data: %s; an answer is {\"decision\": \"accept\"|\"reject\", \"reason\"}, {\"decisions\": [{\"action_id\", \"decision\", \"reason\"}]} or {\"tool_results\": [{\"request_id\", \"success\", \"result\", \"error\"}]}", i, msg))
			}
			if d.Decision != "" {
				r.all = &decision{Decision: d.Decision, Reason: d.Reason}
			}
			r.decisions = append(r.decisions, d.Decisions...)
			r.results = append(r.results, d.ToolResults...)
		}
	}
	for i, d := range append(slices.Clone(r.decisions), derefOr(r.all)...) {
		if d.Decision != "accept" && d.Decision != "reject" {
			return r, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("decision %d: want \"accept\" or \"reject\", got %q", i, d.Decision))
		}
	}
	for i, d := range r.decisions {
		if d.ActionID == "" {
			return r, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("decisions[%d].action_id is required", i))
		}
	}
	for i, t := range r.results {
		if t.RequestID == "" || t.Success == nil {
			return r, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("tool_results[%d]: request_id and success are required", i))
		}
	}
	r.text = strings.Join(texts, "\n\n")
	return r, nil
}

func derefOr(d *decision) []decision {
	if d == nil {
		return nil
	}
	return []decision{*d}
}

// answer applies a message on a task: its decisions and results, or its
// text as steering. A decision or result the run already has (a repeated
// message) is skipped, so a message delivered twice applies once.
func (h Handler) answer(ctx context.Context, m *a2a.Message) (durable.Snapshot, int64, error) {
	c := callerOf(ctx)
	snap, err := h.load(ctx, m.TaskID)
	if err != nil {
		return durable.Snapshot{}, 0, err
	}
	st := snap.State
	if m.ContextID != "" && m.ContextID != st.SessionID {
		return durable.Snapshot{}, 0, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("contextId %s is not the context of task %s (%s)", shortID(m.ContextID), st.RunID, st.SessionID))
	}
	if core.IsTerminal(st.Status) {
		return durable.Snapshot{}, 0, a2a.NewError(a2a.ErrUnsupportedOperation,
			fmt.Sprintf("task %s has ended (%s); send a new message (no taskId) with contextId %s to go on with the conversation", st.RunID, TaskState(st.Status, st.Error), st.SessionID))
	}
	r, err := readReply(m.Parts)
	if err != nil {
		return durable.Snapshot{}, 0, err
	}
	after := st.NextEventSeq - 1
	decisions := r.decisions
	if r.all != nil {
		v, err := h.view(ctx, snap)
		if err != nil {
			return durable.Snapshot{}, 0, err
		}
		if len(v.Pending.Actions) == 0 && len(decisions) == 0 {
			return durable.Snapshot{}, 0, a2a.NewError(a2a.ErrUnsupportedOperation, fmt.Sprintf("task %s waits for no approval", st.RunID))
		}
		for _, a := range v.Pending.Actions {
			decisions = append(decisions, decision{ActionID: a.ActionID, Decision: r.all.Decision, Reason: r.all.Reason})
		}
	}
	if len(decisions) > 0 && !slices.Contains(c.Scopes, ScopeApprovalDecide) {
		return durable.Snapshot{}, 0, a2a.NewError(a2a.ErrUnauthorized, "the caller lacks the "+ScopeApprovalDecide+" scope")
	}
	if len(r.results) > 0 && !slices.Contains(c.Scopes, ScopeResultsSubmit) {
		return durable.Snapshot{}, 0, a2a.NewError(a2a.ErrUnauthorized, "the caller lacks the "+ScopeResultsSubmit+" scope")
	}
	var inputs []core.Input
	for _, d := range decisions {
		inputs = append(inputs, core.ApprovalDecision{ActionID: d.ActionID, Decision: d.Decision, Reason: d.Reason, Resolver: c.Principal})
	}
	for _, t := range r.results {
		inputs = append(inputs, core.ClientResult{RequestID: t.RequestID, Success: *t.Success, Result: t.Result, Error: t.Error})
	}
	if len(inputs) == 0 {
		if r.text == "" {
			return durable.Snapshot{}, 0, a2a.NewError(a2a.ErrInvalidParams, "the message says nothing: send text, or a data part with decisions or tool_results")
		}
		if st.Status == core.StatusApprovalRequired || st.Status == core.StatusRuntimeToolPending {
			v, err := h.view(ctx, snap)
			if err != nil {
				return durable.Snapshot{}, 0, err
			}
			return durable.Snapshot{}, 0, a2a.NewError(a2a.ErrInvalidParams, pendingText(v.Pending))
		}
		inputs = append(inputs, core.Steer{Content: r.text})
	}
	for _, in := range inputs {
		if _, err := h.Runner.Apply(ctx, c.Tenant, st.RunID, in); err != nil && !errors.Is(err, durable.ErrAlreadyDecided) {
			if errors.Is(err, core.ErrNotFound) {
				return durable.Snapshot{}, 0, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("task %s has no pending item %s", st.RunID, itemOf(in)))
			}
			return durable.Snapshot{}, 0, h.rpcError(ctx, err)
		}
	}
	snap, err = h.Runner.Get(ctx, c.Tenant, st.RunID)
	if err != nil {
		return durable.Snapshot{}, 0, h.rpcError(ctx, err)
	}
	return snap, after, nil
}

func itemOf(in core.Input) string {
	switch v := in.(type) {
	case core.ApprovalDecision:
		return v.ActionID
	case core.ClientResult:
		return v.RequestID
	}
	return ""
}
