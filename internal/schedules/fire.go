package schedules

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/runspec"
)

// FireOptions qualify one fire.
type FireOptions struct {
	// Late marks a fire time the scheduler missed, started now by the
	// run-once policy: its trigger says it was caught up.
	Late string
	// LastAttempt records a transient failure as the trigger's outcome
	// instead of returning it for a retry.
	LastAttempt bool
}

// ErrStale is a fire time that is not one of its schedule's (the
// schedule was deleted, or its expression changed after the fire was
// sent): nothing is started or recorded.
var ErrStale = errors.New("not a fire time of the schedule")

// Fire handles one fire time of a schedule: it starts the run (once:
// the run id is the fire time's), or records why it did not. It returns
// the fire time's trigger; an error is transient (retry the fire), or
// ErrStale.
func (s *Service) Fire(ctx context.Context, tenant, id string, fire time.Time, o FireOptions) (core.Trigger, error) {
	fire = fire.UTC()
	if t, err := s.Store.Trigger(ctx, id, fire); err == nil {
		return t, nil
	} else if !errors.Is(err, core.ErrNotFound) {
		return core.Trigger{}, err
	}
	sc, err := s.Store.GetSchedule(ctx, tenant, id)
	if errors.Is(err, core.ErrNotFound) {
		return core.Trigger{}, fmt.Errorf("%w: schedule %s of tenant %s is gone", ErrStale, id, tenant)
	}
	if err != nil {
		return core.Trigger{}, err
	}
	return s.fire(ctx, sc, fire, o)
}

func (s *Service) fire(ctx context.Context, sc core.Schedule, fire time.Time, o FireOptions) (core.Trigger, error) {
	pl, err := planOf(sc)
	if err != nil {
		return core.Trigger{}, fmt.Errorf("%w: %v", ErrStale, err)
	}
	if !pl.isFireTime(fire) {
		return core.Trigger{}, fmt.Errorf("%w: %s is not a fire time of schedule %s", ErrStale, fire.Format(time.RFC3339), sc.ID)
	}
	runID := core.ScheduledRunID(sc.ID, fire)
	started := func(reason string) (core.Trigger, error) {
		return s.record(ctx, sc, core.Trigger{ScheduleID: sc.ID, FireTime: fire, Outcome: core.TriggerStarted, RunID: runID, Reason: reason})
	}
	caughtUp := ""
	if o.Late != "" {
		caughtUp = core.ReasonCaughtUp + ": " + o.Late
	}
	if _, err := s.Runner.Store.LoadRun(ctx, runID); err == nil {
		return started(caughtUp)
	}
	if sc.Paused {
		return s.record(ctx, sc, core.Trigger{ScheduleID: sc.ID, FireTime: fire, Outcome: core.TriggerSkipped,
			Reason: core.ReasonPaused + ": the schedule was paused at its fire time"})
	}
	if sc.Overlap == core.OverlapSkip && sc.LastRunID != "" {
		prev, err := s.Runner.Get(ctx, sc.Tenant, sc.LastRunID)
		switch {
		case err == nil && !core.IsTerminal(prev.State.Status):
			return s.record(ctx, sc, core.Trigger{ScheduleID: sc.ID, FireTime: fire, Outcome: core.TriggerSkipped,
				Reason: fmt.Sprintf("%s: the previous run %s is still %s", core.ReasonOverlap, sc.LastRunID, prev.State.Status)})
		case err != nil && !errors.Is(err, core.ErrNotFound):
			return s.failed(ctx, sc, fire, o, err)
		}
	}
	req, err := s.startRequest(sc)
	if err != nil {
		return s.failed(ctx, sc, fire, o, err)
	}
	req.RunID = runID
	if req.SessionID == "" {
		req.SessionID = core.ScheduledSessionID(sc.ID, fire)
	}
	req.Schedule = &core.ScheduleRef{ID: sc.ID, FireTime: fire}
	if _, err := s.Runner.Start(ctx, sc.Tenant, req); err != nil {
		if _, lerr := s.Runner.Store.LoadRun(ctx, runID); lerr == nil {
			return started(caughtUp) // another attempt started it meanwhile
		}
		return s.failed(ctx, sc, fire, o, err)
	}
	s.Log.InfoContext(ctx, "scheduled run started", "tenant", sc.Tenant, "schedule_id", sc.ID, "fire_time", fire, "run_id", runID)
	return started(caughtUp)
}

// failed records a fire time that could not start its run, or returns a
// transient error for a retry.
func (s *Service) failed(ctx context.Context, sc core.Schedule, fire time.Time, o FireOptions, err error) (core.Trigger, error) {
	ae := runspec.Classify(err)
	if ae.Status >= http.StatusInternalServerError && !o.LastAttempt {
		return core.Trigger{}, err
	}
	reason := ae.Code + ": " + ae.Message
	if ae.Status >= http.StatusInternalServerError {
		reason = ae.Code + ": " + err.Error()
	}
	s.Log.WarnContext(ctx, "scheduled run not started", "tenant", sc.Tenant, "schedule_id", sc.ID, "fire_time", fire, "reason", reason)
	return s.record(ctx, sc, core.Trigger{ScheduleID: sc.ID, FireTime: fire, Outcome: core.TriggerFailed, Reason: reason})
}

// maxReason caps a trigger's reason, in bytes.
const maxReason = 1000

// record stores a trigger (the first record of a fire time wins).
func (s *Service) record(ctx context.Context, sc core.Schedule, t core.Trigger) (core.Trigger, error) {
	now := s.Clock.Now().UTC()
	t.RecordedAt, t.ExpiresAt = now, now.Add(s.Config.TriggerRetention)
	if len(t.Reason) > maxReason {
		t.Reason = strings.ToValidUTF8(t.Reason[:maxReason], "") + "…"
	}
	got, _, err := s.Store.RecordTrigger(ctx, sc.Tenant, t)
	if err != nil {
		return core.Trigger{}, fmt.Errorf("record trigger of schedule %s at %s: %w", sc.ID, t.FireTime.Format(time.RFC3339), err)
	}
	return got, nil
}

// catchUp handles the fire times after the schedule's cursor up to now
// that were missed (why: core.ReasonPaused or core.ReasonMissed): with
// MissedRunOnce the latest of them starts its run now, the others are
// recorded as skipped (at most the latest maxCatchUpRecords of them).
func (s *Service) catchUp(ctx context.Context, sc core.Schedule, pl plan, now time.Time, why string) (time.Time, error) {
	fires, n := pl.between(sc.Cursor, now, maxCatchUpRecords)
	if len(fires) == 0 {
		return time.Time{}, nil
	}
	detail := map[string]string{core.ReasonPaused: "the schedule was paused", core.ReasonMissed: "the scheduler was not running"}[why]
	last := len(fires)
	if sc.Missed == core.MissedRunOnce {
		last--
	}
	if n > len(fires) {
		s.Log.WarnContext(ctx, "schedule missed more fire times than it records", "schedule_id", sc.ID, "missed", n, "recorded", len(fires))
	}
	for _, f := range fires[:last] {
		if _, err := s.record(ctx, sc, core.Trigger{ScheduleID: sc.ID, FireTime: f, Outcome: core.TriggerSkipped,
			Reason: fmt.Sprintf("%s: %s at its fire time (missed policy %s)", why, detail, sc.Missed)}); err != nil {
			return time.Time{}, err
		}
	}
	end := fires[len(fires)-1]
	if last == len(fires) {
		return end, nil
	}
	sc.Paused = false
	_, err := s.fire(ctx, sc, fires[last], FireOptions{Late: detail + " at its fire time; started once on " + map[string]string{core.ReasonPaused: "resume", core.ReasonMissed: "restart"}[why], LastAttempt: true})
	return end, err
}

// Tick fires what is due at the clock's now on every tenant's schedules
// (baton dev's in-process scheduler): fire times reached within
// MisfireGrace fire as usual; older ones were missed while the scheduler
// was not running, and the schedule's missed policy applies to them.
func (s *Service) Tick(ctx context.Context) error {
	now := s.Clock.Now().UTC()
	var errs []error
	cursor := ""
	for {
		list, next, err := s.Store.AllSchedules(ctx, 100, cursor)
		if err != nil {
			return err
		}
		for _, sc := range list {
			if sc.Paused {
				continue
			}
			if err := s.due(ctx, sc, now); err != nil {
				errs = append(errs, fmt.Errorf("schedule %s: %w", sc.ID, err))
			}
		}
		if next == "" {
			return errors.Join(errs...)
		}
		cursor = next
	}
}

// due fires one schedule's due fire times.
func (s *Service) due(ctx context.Context, sc core.Schedule, now time.Time) error {
	pl, err := planOf(sc)
	if err != nil {
		return err
	}
	first, ok := pl.next(sc.Cursor)
	if !ok || first.After(now) {
		return nil
	}
	grace := s.Config.MisfireGrace
	if cutoff := now.Add(-grace); first.Before(cutoff) {
		missed := sc
		// The missed ones are those before the cutoff.
		if _, err := s.catchUp(ctx, missed, pl, cutoff, core.ReasonMissed); err != nil {
			return err
		}
		if sc, err = s.Store.GetSchedule(ctx, sc.Tenant, sc.ID); err != nil {
			return err
		}
		if sc.Cursor.Before(cutoff) {
			sc.Cursor = cutoff
		}
	}
	for _, f := range pl.nextN(sc.Cursor, 1000) {
		if f.After(now) {
			break
		}
		if _, err := s.fire(ctx, sc, f, FireOptions{LastAttempt: now.Sub(f) >= grace/2}); err != nil {
			return err
		}
		if cur, err := s.Store.GetSchedule(ctx, sc.Tenant, sc.ID); err == nil {
			sc = cur
		}
	}
	return nil
}

// Loop runs Tick every interval until ctx ends: baton dev's scheduler.
func (s *Service) Loop(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := s.Tick(ctx); err != nil && ctx.Err() == nil {
			s.Log.WarnContext(ctx, "scheduler tick", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
