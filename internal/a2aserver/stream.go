package a2aserver

import (
	"context"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/runstream"
)

// follow streams a run as A2A events: the task as it is, then a
// working status update per step of progress (the Baton event in its
// metadata), each model turn's text as chunks of the answer artifact
// while it is generated, and at the end the answer artifact whole and the
// final status (or the input-required status of a paused run). It stops
// after the caller's StreamMax; the client resubscribes (SubscribeToTask).
func (h Handler) follow(ctx context.Context, snap durable.Snapshot, after int64, yield func(a2a.Event, error) bool) {
	c := callerOf(ctx)
	v, err := h.view(ctx, snap)
	if err != nil {
		yield(nil, err)
		return
	}
	first := taskOf(v, nil)
	if after == 0 && !ends(v.Status) {
		first.Status.State, first.Status.Message = a2a.TaskStateSubmitted, nil
	}
	if !yield(first, nil) {
		return
	}
	s := &sink{h: &h, yield: yield, runID: v.RunID, sessionID: v.SessionID}
	if err := (runstream.Follower{Runner: h.Runner, Log: h.Log}).Follow(ctx, c.Tenant, v.RunID, after, c.StreamMax, s); err != nil {
		yield(nil, h.rpcError(ctx, err))
	}
}

// progress are the Baton events a stream shows as working status
// updates.
var progress = map[string]bool{
	core.EventRunStarted: true, core.EventTurnStarted: true, core.EventToolCall: true, core.EventToolResult: true,
	core.EventApprovalDecided: true, core.EventRuntimeToolSubmitted: true, core.EventSteeringQueued: true,
	core.EventModelRetry: true, core.EventStatus: true, core.EventChildRunStarted: true,
}

// sink hands a followed run's events to the A2A stream.
type sink struct {
	h                *Handler
	yield            func(a2a.Event, error) bool
	runID, sessionID string
	// streamed is the model call (turn and attempt) whose text the answer
	// artifact holds so far; zero before any.
	streamed core.DeltaPos
}

func (s *sink) send(ev a2a.Event) error {
	if !s.yield(ev, nil) {
		return runstream.ErrGone
	}
	return nil
}

func (s *sink) Event(_ context.Context, ev core.Event) error {
	if !progress[ev.Type] {
		return nil
	}
	u := workingEvent(s.runID, s.sessionID, ev.At, ev)
	if d, ok := ev.Data.(*core.StatusData); ok && d.Message != "" {
		u.Status.Message = a2a.NewMessageForTask(a2a.MessageRoleAgent, u, a2a.NewTextPart(d.Message))
	}
	return s.send(u)
}

// Announced: the turn's start went out already.
func (s *sink) Announced(context.Context, core.Event) error { return nil }

// Deltas sends a batch's text (reasoning is not sent) as a chunk of the
// answer artifact while the turn is generated. The first chunk of a model
// call (a turn, or a retried attempt of one) replaces what an earlier
// call streamed (append false): a turn that ends in tool calls is not the
// answer, and the next turn's text takes its place. The end sends the
// answer whole (lastChunk), so the artifact a client is left with is the
// task's.
func (s *sink) Deltas(_ context.Context, b core.DeltaBatch) error {
	var text strings.Builder
	for _, d := range b.Deltas {
		if d.Kind == core.DeltaToken {
			text.WriteString(d.Text)
		}
	}
	if text.Len() == 0 {
		return nil
	}
	call := core.DeltaPos{Turn: b.Pos.Turn, Attempt: b.Pos.Attempt}
	more := s.streamed == call
	s.streamed = call
	return s.send(&a2a.TaskArtifactUpdateEvent{TaskID: a2a.TaskID(s.runID), ContextID: s.sessionID, Append: more,
		Artifact: &a2a.Artifact{ID: AnswerArtifact, Name: AnswerArtifact, Parts: a2a.ContentParts{a2a.NewTextPart(text.String())}},
		Metadata: map[string]any{"baton": map[string]any{"turn": b.Pos.Turn}}})
}

// Flush: the SDK's stream writer flushes every event.
func (s *sink) Flush() {}

// KeepAlive: the SDK's stream writer keeps the stream alive.
func (s *sink) KeepAlive() error { return nil }

func (s *sink) End(ctx context.Context, snap durable.Snapshot) error {
	v, err := s.h.view(ctx, snap)
	if err != nil {
		return err
	}
	if v.Status == core.StatusCompleted {
		if err := s.send(&a2a.TaskArtifactUpdateEvent{TaskID: a2a.TaskID(v.RunID), ContextID: v.SessionID, Artifact: answer(v.Result.FinalContent), LastChunk: true}); err != nil {
			return err
		}
	}
	return s.send(statusEvent(v))
}
