package a2aserver

import (
	"context"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/runstream"
)

// follow streams a run as A2A events: the task as it is, then a
// working status update per step of progress (the Baton event in its
// metadata), and at the end the answer artifact and the final status (or
// the input-required status of a paused run). It stops after the
// caller's StreamMax; the client resubscribes (SubscribeToTask).
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

// Deltas: a task's answer is its artifact, sent whole at the end.
func (s *sink) Deltas(context.Context, core.DeltaBatch) error { return nil }

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
