package runstream

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
)

// Limits of a followed stream: a keep-alive at least every KeepAliveEvery
// keeps proxies from closing an idle stream; Page is how many events one
// read takes.
const (
	KeepAliveEvery = 15 * time.Second
	Page           = 100
)

// ErrGone is what a Sink returns when its client went away; Follow then
// stops and returns nil.
var ErrGone = errors.New("runstream: the client went away")

// Sink receives a followed run. Event gets each committed lifecycle
// event, and the start of a turn whose tokens come before its
// turn_started is committed (a turn_started with Seq 0, before the
// turn's first delta batch); Announced then gets that committed
// turn_started, which only moves the client's cursor. Deltas gets each
// batch of token deltas (before the events of the reply they belong to),
// Flush is called after each poll that delivered something, KeepAlive
// when nothing happened for KeepAliveEvery, and End once, with the run's
// snapshot, when the run has finished or paused.
type Sink interface {
	Event(ctx context.Context, ev core.Event) error
	Announced(ctx context.Context, ev core.Event) error
	Deltas(ctx context.Context, b core.DeltaBatch) error
	Flush()
	KeepAlive() error
	End(ctx context.Context, snap durable.Snapshot) error
}

// ChildSink is a Sink that also takes the committed events of the run's
// child runs (sub-agents), and theirs, each with the run it belongs to;
// Follow hands them over when Follower.Children is set.
type ChildSink interface {
	ChildEvent(ctx context.Context, runID string, ev core.Event) error
}

// Follower follows runs through a runner.
type Follower struct {
	Runner *durable.Runner
	Log    *slog.Logger
	// FromTurn is the first turn whose deltas are followed; 0 means the
	// turn in flight when Follow starts.
	FromTurn int
	// Children adds the committed events of the run's child runs (and
	// theirs), from their first, to a ChildSink: on each full poll, after
	// the run's own, and once more before End.
	Children bool
}

// Ends reports whether a run in status s ends its stream: a finished
// run, or one paused for a client tool or an approval.
func Ends(s core.RunStatus) bool {
	return core.IsTerminal(s) || s == core.StatusRuntimeToolPending || s == core.StatusApprovalRequired
}

// Follow hands s the run's events after after until the run finishes or
// pauses (then End), max passes or ctx ends, interleaving the token
// deltas of the run's model turns from the turn in flight when it
// starts. Each poll reads the run, then its new delta batches up to the
// turn in flight, then its new events up to the run it read. A turn's
// deltas are all written before its reply is committed (durable's
// publisher), so they come out before the events of that reply: each
// batch is handed over before the first event of a later turn, or of its
// own turn but for turn_started and model_retry (committed before and
// during the model call). A turn's turn_started is committed with its
// reply, so the turn in flight has none yet: its first batch is preceded
// by a turn start made from the batch (at: when the model call began,
// the batch's attempt), and the turn_started committed later goes to
// Announced. It reads the store sparingly: at once, then backing off
// from 100 ms to 1 s while nothing happens.
func (f Follower) Follow(ctx context.Context, tenant, runID string, after int64, max time.Duration, s Sink) error {
	err := f.follow(ctx, tenant, runID, after, max, s)
	if errors.Is(err, ErrGone) || err != nil && ctx.Err() != nil {
		return nil
	}
	return err
}

func (f Follower) follow(ctx context.Context, tenant, runID string, after int64, max time.Duration, s Sink) error {
	start := time.Now()
	lastWrite := start
	delay := backoffFrom
	var cursor *core.DeltaPos
	var snap durable.Snapshot
	announced := 0 // the last turn whose start s got
	deltas := func(b core.DeltaBatch) error {
		if b.Pos.Turn > announced {
			announced = b.Pos.Turn
			start := core.Event{Type: core.EventTurnStarted, Turn: b.Pos.Turn, At: time.UnixMilli(b.Pos.Attempt).UTC(), Data: &core.TurnStartedData{Turn: b.Pos.Turn}}
			if err := s.Event(ctx, start); err != nil {
				return err
			}
		}
		return s.Deltas(ctx, b)
	}
	notifier, _ := f.Runner.Deltas.(core.ChangeNotifier)
	var pace deltaPace
	var tree *childCursors
	if cs, ok := s.(ChildSink); ok && f.Children {
		tree = &childCursors{after: map[string]int64{}, sink: cs}
	}
	for {
		var changed <-chan struct{}
		if notifier != nil {
			changed = notifier.Changed(runID)
		}
		// A full poll reads the run, its new deltas and its new events;
		// while a turn streams on a store that cannot notify, the polls
		// between full ones read only the deltas (deltaPace).
		full := notifier != nil || cursor == nil || !pace.streaming(time.Now()) || time.Since(pace.lastFull) >= fullPollEvery
		if full {
			var err error
			if snap, err = f.Runner.Get(ctx, tenant, runID); err != nil {
				return err
			}
			pace.lastFull = time.Now()
		}
		if cursor == nil {
			cursor = &core.DeltaPos{Turn: snap.State.Turn + 1}
			if f.FromTurn > 0 {
				cursor.Turn = f.FromTurn
			}
		}
		batches := f.deltaBatches(ctx, runID, inFlight(snap.State), cursor)
		var evs []core.Event
		if full {
			var err error
			if evs, err = f.Runner.Store.Events(ctx, runID, after, snap.State.NextEventSeq, Page); err != nil {
				return err
			}
		}
		wrote := 0
		for _, ev := range evs {
			for len(batches) > 0 && (batches[0].Pos.Turn < ev.Turn || batches[0].Pos.Turn == ev.Turn && ev.Type != core.EventTurnStarted && ev.Type != core.EventModelRetry) {
				if err := deltas(batches[0]); err != nil {
					return err
				}
				wrote++
				batches = batches[1:]
			}
			deliver := s.Event
			if ev.Type == core.EventTurnStarted {
				if ev.Turn <= announced {
					deliver = s.Announced
				}
				if ev.Turn > announced {
					announced = ev.Turn
				}
			}
			if err := deliver(ctx, ev); err != nil {
				return err
			}
			after = ev.Seq
		}
		for _, b := range batches {
			if err := deltas(b); err != nil {
				return err
			}
			wrote++
		}
		if tree != nil && full {
			n, err := f.followChildren(ctx, snap.State, tree)
			if err != nil {
				return err
			}
			wrote += n
		}
		now := time.Now()
		if wrote > 0 {
			pace.got(now)
		}
		busy := snap.State.Status == core.StatusRunning || snap.State.Status == core.StatusQueued
		if len(evs) > 0 || wrote > 0 {
			s.Flush()
			lastWrite, delay = now, backoffFrom
			if busy {
				delay = busyBackoff
			}
		}
		if len(evs) == Page {
			continue
		}
		if full && Ends(snap.State.Status) {
			return s.End(ctx, snap)
		}
		if now.Sub(start) >= max {
			return nil
		}
		if now.Sub(lastWrite) >= KeepAliveEvery {
			if err := s.KeepAlive(); err != nil {
				return err
			}
			s.Flush()
			lastWrite = now
		}
		pause := delay
		switch {
		case notifier != nil:
			// Every change wakes the stream: the timer only keeps it
			// alive.
			pause = notifiedPoll
		case pace.streaming(now):
			pause = pace.next(wrote > 0)
		}
		pause = min(pause, KeepAliveEvery-now.Sub(lastWrite), max-now.Sub(start))
		// changed is nil without a notifier: only the pause or ctx ends it.
		timer := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-changed:
			timer.Stop()
		case <-timer.C:
		}
		delay = min(delay*2, time.Second)
		if busy {
			delay = min(delay, busyCap)
		}
	}
}

// inFlight is the last turn whose deltas a stream may hand over at st:
// the next turn once st schedules its model call (the turn before has
// committed all its events), else the last committed one. A read between
// full polls uses the run of the last full one: a later turn waits for
// the next.
func inFlight(st core.RunState) int {
	for _, step := range st.ScheduledSteps() {
		if step.Kind == core.StepModelTurn {
			return st.Turn + 1
		}
	}
	return st.Turn
}

// Polling: at once, then backing off from backoffFrom to 1 s while
// nothing happens; while a turn's deltas come, in step with them.
const (
	backoffFrom = 100 * time.Millisecond
	// fullPollEvery bounds how long events wait while deltas stream.
	fullPollEvery = 250 * time.Millisecond
	// nearPoll is the step of the delta reads around a batch's expected
	// time, and early how far before it they start.
	nearPoll = 15 * time.Millisecond
	early    = 20 * time.Millisecond
	// busyBackoff is where the backoff starts, and busyCap where it
	// stops, while the run is queued or running between streamed turns:
	// its next turn's first token is due any moment.
	busyBackoff = 25 * time.Millisecond
	busyCap     = 250 * time.Millisecond
	// notifiedPoll is the pause of a stream on a store that tells it
	// when the run changes: a read for safety's sake.
	notifiedPoll = time.Second
)

// deltaPace follows the rhythm of a turn's delta batches on a store
// that cannot notify: the writer writes a batch every gap (as long as
// the model takes for a batch's tokens), so the next read comes just
// before the next batch is due, then every nearPoll until it is there —
// a batch waits about nearPoll/2 for its reader instead of half the
// backoff.
type deltaPace struct {
	last, lastFull time.Time
	gap            time.Duration // the batches' mean spacing (moving average)
}

// got records batches read at now.
func (p *deltaPace) got(now time.Time) {
	if !p.last.IsZero() {
		if d := now.Sub(p.last); d < time.Second {
			if p.gap == 0 {
				p.gap = d
			} else {
				p.gap = (3*p.gap + d) / 4
			}
		}
	}
	p.last = now
}

// streaming: batches came lately, more are likely.
func (p *deltaPace) streaming(now time.Time) bool {
	return !p.last.IsZero() && now.Sub(p.last) < max(2*p.gap, 300*time.Millisecond)
}

// next is the pause before the next read: until just before the next
// batch is due after one came, then nearPoll.
func (p *deltaPace) next(got bool) time.Duration {
	if got && p.gap > early+nearPoll {
		return p.gap - early
	}
	return nearPoll
}

// deltaBatches reads the delta batches at or after cursor of turns up to
// lastTurn and moves cursor past them. Without a delta store it reads
// nothing; a failed read is logged and skipped: deltas are best effort
// (events are not).
func (f Follower) deltaBatches(ctx context.Context, runID string, lastTurn int, cursor *core.DeltaPos) []core.DeltaBatch {
	if f.Runner.Deltas == nil {
		return nil
	}
	batches, err := f.Runner.Deltas.Deltas(ctx, runID, *cursor, f.Runner.Clock.Now(), Page)
	if err != nil {
		if ctx.Err() == nil && f.Log != nil {
			f.Log.WarnContext(ctx, "stream: reading token deltas failed", "run_id", runID, "err", err)
		}
		return nil
	}
	for i, b := range batches {
		if b.Pos.Turn > lastTurn {
			batches = batches[:i]
			break
		}
		*cursor = b.Pos
		cursor.Batch++
	}
	return batches
}

// childCursors are a stream's positions in the events of the run's
// child runs.
type childCursors struct {
	after map[string]int64
	sink  ChildSink
}

// followChildren hands the sink the new committed events of st's child
// runs and of theirs, depth first in the order they started, and returns
// how many it handed over.
func (f Follower) followChildren(ctx context.Context, st core.RunState, tree *childCursors) (int, error) {
	n := 0
	_, err := f.Runner.WalkChildren(ctx, st, false, func(child core.RunRecord) (bool, error) {
		id := child.State.RunID
		for {
			evs, err := f.Runner.Store.Events(ctx, id, tree.after[id], child.State.NextEventSeq, Page)
			if err != nil {
				return false, err
			}
			for _, ev := range evs {
				if err := tree.sink.ChildEvent(ctx, id, ev); err != nil {
					return false, err
				}
				tree.after[id] = ev.Seq
				n++
			}
			if len(evs) < Page {
				return false, nil
			}
		}
	})
	return n, err
}
