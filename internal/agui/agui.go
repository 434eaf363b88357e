package agui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/runspec"
	"github.com/baton-agents/baton/internal/runstream"
)

// Handler serves the AG-UI route.
type Handler struct {
	Runner    *durable.Runner
	Validator runspec.Validator
	Log       *slog.Logger
}

// Body writes a stream; flush is called after each batch of events.
type Body = func(ctx context.Context, w io.Writer, flush func()) error

// Open applies a RunAgentInput for agent on behalf of tenant and returns
// the stream of the run it starts or continues, for at most max. One
// rule: an error (*runspec.Error) is a request that cannot succeed as
// written (any 4xx but 409) or a failure (5xx), answered before any
// stream; a request that conflicts with the thread's current state (409:
// an unknown or answered tool call or interrupt, an expired interrupt,
// nothing to resume, another agent's thread, a busy thread) is a stream
// of one RUN_ERROR the frontend shows.
func (h Handler) Open(ctx context.Context, tenant string, principal *core.Principal, agent string, body []byte, max time.Duration) (Body, error) {
	in, err := Decode(body)
	if err != nil {
		return nil, err
	}
	runID, after, turn, err := h.apply(ctx, tenant, principal, agent, in)
	if err != nil {
		if ae := runspec.Classify(err); ae.Status != http.StatusConflict {
			// A request that cannot succeed as written (an unknown agent,
			// a bad thread id or override, an invalid message or resume,
			// a provider not enabled), or a failure of ours, is an HTTP
			// error before any stream.
			return nil, err
		}
		// A request that conflicts with the thread's state is a
		// refusal the frontend shows in its event stream.
		ae := runspec.Classify(err)
		return func(_ context.Context, w io.Writer, flush func()) error {
			err := writeEvents(w, []Event{{Type: "RUN_ERROR", Code: ae.Code, Message: ae.Message}})
			flush()
			return err
		}, nil
	}
	return func(ctx context.Context, w io.Writer, flush func()) error {
		s := &sink{w: w, flush: flush, threadID: in.ThreadID, runID: in.RunID,
			t: &Translator{RunID: runID, Load: func(ctx context.Context, from, to int64) ([]core.Message, error) {
				return h.Runner.Messages(ctx, tenant, runID, from-1, int(to-from+1))
			}}}
		if err := writeEvents(w, []Event{{Type: "RUN_STARTED", ThreadID: in.ThreadID, RunID: in.RunID, Metadata: map[string]any{"baton_run_id": runID}}}); err != nil {
			return nil
		}
		flush()
		return runstream.Follower{Runner: h.Runner, Log: h.Log, FromTurn: turn, Children: true}.Follow(ctx, tenant, runID, after, max, s)
	}, nil
}

// apply starts a run on the thread, or answers its paused run, and
// returns the Baton run, the event seq the stream starts after and the
// first turn whose deltas it streams.
func (h Handler) apply(ctx context.Context, tenant string, principal *core.Principal, agent string, in RunAgentInput) (string, int64, int, error) {
	head, transcript, err := h.Runner.Session(ctx, tenant, in.ThreadID)
	if err != nil {
		return "", 0, 0, err
	}
	msgs, tools := trailingTools(newMessages(in.Messages, transcript))
	// resent: the input ends with tool messages the thread already has
	// and brings nothing else.
	_, sent := trailingTools(in.Messages)
	resent := len(msgs) == 0 && len(tools) == 0 && len(in.Resume) == 0 && len(sent) > 0
	if head.ActiveRun == "" {
		if len(in.Resume) > 0 {
			return "", 0, 0, runspec.Errorf(409, "unknown_interrupt", "interrupt %s is not pending on this thread", in.Resume[0].InterruptID)
		}
		if len(tools) > 0 {
			return "", 0, 0, h.answeredOr(transcript, tools[0])
		}
		if resent {
			return "", 0, 0, h.answeredOr(transcript, sent[len(sent)-1])
		}
		return h.start(ctx, tenant, principal, agent, in, msgs)
	}
	snap, err := h.Runner.Get(ctx, tenant, head.ActiveRun)
	if err != nil {
		return "", 0, 0, err
	}
	st := snap.State
	after := st.NextEventSeq - 1
	if st.Config.Agent != agent {
		return "", 0, 0, runspec.Errorf(409, "thread_agent_mismatch", "thread %s belongs to agent %s", in.ThreadID, st.Config.Agent)
	}
	reqs, _ := st.Pending()
	for _, m := range tools {
		var req *core.PendingToolRequest
		for i := range reqs {
			if reqs[i].ToolCallID == m.ToolCallID {
				req = &reqs[i]
			}
		}
		if req == nil {
			return "", 0, 0, h.answeredOr(transcript, m)
		}
		res := core.ClientResult{RequestID: req.RequestID, Success: m.Error == ""}
		if res.Success {
			res.Result = resultValue(m.text())
		} else {
			res.Error = m.Error
		}
		if _, err := h.Runner.Apply(ctx, tenant, st.RunID, res); err != nil {
			return "", 0, 0, toolError(err, m.ToolCallID)
		}
	}
	for _, r := range in.Resume {
		d := core.ApprovalDecision{ActionID: r.InterruptID, Decision: "reject", Resolver: principal}
		if r.Status == "resolved" {
			d.Decision, _ = r.Payload["decision"].(string)
			if d.Decision != "accept" && d.Decision != "reject" {
				return "", 0, 0, runspec.Errorf(400, "invalid_resume", "resume %s: payload.decision must be \"accept\" or \"reject\"", r.InterruptID)
			}
		}
		d.Reason, _ = r.Payload["reason"].(string)
		if _, err := h.Runner.Apply(ctx, tenant, st.RunID, d); err != nil {
			return "", 0, 0, h.interruptError(ctx, err, st.RunID, r.InterruptID)
		}
	}
	for _, m := range msgs {
		if m.Role == "user" {
			if _, err := h.Runner.Apply(ctx, tenant, st.RunID, core.Steer{Content: m.text()}); err != nil {
				return "", 0, 0, err
			}
		}
	}
	if resent && runstream.Ends(st.Status) {
		return "", 0, 0, h.answeredOr(transcript, sent[len(sent)-1])
	}
	if len(tools) == 0 && len(in.Resume) == 0 && len(msgs) == 0 && runstream.Ends(st.Status) {
		return "", 0, 0, runspec.Errorf(409, "nothing_to_resume", "the thread's run %s is %s; answer its pending calls or interrupts", st.RunID, st.Status)
	}
	return st.RunID, after, st.Turn + 1, nil
}

func (h Handler) start(ctx context.Context, tenant string, principal *core.Principal, agent string, in RunAgentInput, msgs []Message) (string, int64, int, error) {
	raw, err := loose(msgs)
	if err != nil {
		return "", 0, 0, err
	}
	tid := in.ThreadID
	b := runspec.Body{Agent: agent, SessionID: &tid, Messages: raw, Metadata: map[string]any{"agui_run_id": in.RunID}}
	for _, t := range in.Tools {
		decl := map[string]any{"name": toBaton(t.Name), "description": t.Description}
		if t.Parameters != nil {
			decl["parameters"] = t.Parameters
		}
		b.Tools = append(b.Tools, decl)
	}
	if in.ForwardedProps != nil && in.ForwardedProps.Baton != nil {
		in.ForwardedProps.Baton.Apply(&b)
	}
	req, err := h.Validator.Request(b)
	if err != nil {
		return "", 0, 0, err
	}
	p := *principal
	p.RequestContext, p.AgentID = "agui", agent
	req.Principal = &p
	snap, err := h.Runner.Start(ctx, tenant, req)
	if err != nil {
		return "", 0, 0, err
	}
	return snap.State.RunID, 0, 1, nil
}

// trailingTools splits msgs into the messages before its trailing tool
// messages and those tool messages.
func trailingTools(msgs []Message) ([]Message, []Message) {
	i := len(msgs)
	for i > 0 && msgs[i-1].Role == "tool" {
		i--
	}
	return msgs[:i], msgs[i:]
}

// answeredOr: a tool message for a call the transcript has a result for
// is already answered; any other is unknown.
func (h Handler) answeredOr(transcript []core.Message, m Message) error {
	for _, t := range transcript {
		if t.Role == core.RoleToolResult && t.ToolCallID() == m.ToolCallID {
			return runspec.Errorf(409, "tool_call_already_answered", "tool call %s already has a result", m.ToolCallID)
		}
	}
	return runspec.Errorf(409, "unknown_tool_call", "tool call %s is not pending on this thread", m.ToolCallID)
}

func toolError(err error, callID string) error {
	if errors.Is(err, durable.ErrAlreadyDecided) {
		return runspec.Errorf(409, "tool_call_already_answered", "tool call %s: %v", callID, err)
	}
	return err
}

func (h Handler) interruptError(ctx context.Context, err error, runID, id string) error {
	switch {
	case errors.Is(err, durable.ErrAlreadyDecided):
		if p, perr := h.Runner.Store.PendingItem(ctx, runID, id); perr == nil && p.Status == core.PendingExpired {
			return runspec.Errorf(409, "interrupt_expired", "interrupt %s expired", id)
		}
		return runspec.Errorf(409, "interrupt_already_decided", "interrupt %s: %v", id, err)
	case errors.Is(err, core.ErrNotFound):
		return runspec.Errorf(409, "unknown_interrupt", "interrupt %s is not pending on this thread", id)
	}
	return err
}

// resultValue: a tool message's content is the result; JSON content is
// sent as its value.
func resultValue(s string) any {
	var v any
	if json.Unmarshal([]byte(s), &v) == nil {
		return v
	}
	return s
}

type sink struct {
	w               io.Writer
	flush           func()
	t               *Translator
	threadID, runID string
}

func (s *sink) Event(ctx context.Context, ev core.Event) error {
	out, err := s.t.Event(ctx, ev)
	if err != nil {
		return err
	}
	return writeEvents(s.w, out)
}

// ChildEvent sends a child run's event as a CUSTOM event.
func (s *sink) ChildEvent(_ context.Context, runID string, ev core.Event) error {
	return writeEvents(s.w, []Event{ChildEvent(runID, ev)})
}

// Announced: the turn's step was opened by its start already.
func (s *sink) Announced(context.Context, core.Event) error { return nil }

func (s *sink) Deltas(_ context.Context, b core.DeltaBatch) error {
	return writeEvents(s.w, s.t.Deltas(b))
}

func (s *sink) Flush() { s.flush() }

func (s *sink) KeepAlive() error {
	if _, err := io.WriteString(s.w, ": keep-alive\n\n"); err != nil {
		return runstream.ErrGone
	}
	return nil
}

func (s *sink) End(_ context.Context, snap durable.Snapshot) error {
	err := writeEvents(s.w, s.t.End(s.threadID, s.runID, snap.State))
	s.flush()
	return err
}

// writeEvents writes events as SSE data lines.
func writeEvents(w io.Writer, evs []Event) error {
	for _, ev := range evs {
		b, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return runstream.ErrGone
		}
	}
	return nil
}
