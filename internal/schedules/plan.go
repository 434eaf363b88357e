package schedules

import (
	"strings"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/cronspec"
)

// plan is when a schedule fires: its expression (or one-off time) within
// its start and end.
type plan struct {
	spec       *cronspec.Spec
	at         *time.Time
	loc        *time.Location
	start, end *time.Time
}

// planOf parses a schedule's timing.
func planOf(sc core.Schedule) (plan, error) {
	loc, err := cronspec.LoadZone(sc.Timezone)
	if err != nil {
		return plan{}, asFieldErr(err, "timezone")
	}
	p := plan{at: sc.At, loc: loc, start: sc.Start, end: sc.End}
	if sc.At == nil {
		anchor := sc.CreatedAt.UTC().Truncate(time.Minute)
		if sc.Start != nil {
			anchor = *sc.Start
		}
		if p.spec, err = cronspec.Parse(sc.Cron, loc, anchor); err != nil {
			return plan{}, asFieldErr(err, "cron")
		}
	}
	return p, nil
}

// next is the first fire time after after, within the window.
func (p plan) next(after time.Time) (time.Time, bool) {
	if p.start != nil && after.Before(*p.start) {
		// The start itself may be a fire time.
		after = p.start.Add(-time.Nanosecond)
	}
	var t time.Time
	if p.at != nil {
		if !p.at.After(after) {
			return time.Time{}, false
		}
		t = *p.at
	} else {
		var ok bool
		if t, ok = p.spec.Next(after); !ok {
			return time.Time{}, false
		}
	}
	if p.end != nil && t.After(*p.end) {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// nextN lists up to n fire times after after.
func (p plan) nextN(after time.Time, n int) []time.Time {
	out := []time.Time{}
	for len(out) < n {
		t, ok := p.next(after)
		if !ok {
			break
		}
		out = append(out, t)
		after = t
	}
	return out
}

// isFireTime reports whether t is one of the plan's fire times.
func (p plan) isFireTime(t time.Time) bool {
	got, ok := p.next(t.Add(-time.Nanosecond))
	return ok && got.Equal(t)
}

// between lists the fire times in (from, to], oldest first: at most
// keep of the latest, and how many there were in all (the walk stops
// after maxCatchUpScan).
func (p plan) between(from, to time.Time, keep int) ([]time.Time, int) {
	var out []time.Time
	n := 0
	for n < maxCatchUpScan {
		t, ok := p.next(from)
		if !ok || t.After(to) {
			break
		}
		n++
		out = append(out, t)
		if len(out) > keep {
			out = out[1:]
		}
		from = t
	}
	return out, n
}

// awsSpec is the schedule in EventBridge Scheduler's terms.
func (p plan) awsSpec(sc core.Schedule) (core.ScheduleSpec, error) {
	spec := core.ScheduleSpec{Timezone: sc.Timezone, Start: sc.Start, End: sc.End, Enabled: !sc.Paused}
	if p.at != nil {
		// In UTC: a local time in a repeated hour would be ambiguous.
		spec.Expression, spec.Timezone = cronspec.AtExpression(*p.at, time.UTC), "UTC"
		return spec, nil
	}
	expr, err := p.spec.AWS()
	if err != nil {
		return spec, err
	}
	spec.Expression = expr
	if spec.Start == nil && strings.HasPrefix(expr, "rate(") {
		// A rate counts from its anchor, on AWS as here.
		anchor := sc.CreatedAt.UTC().Truncate(time.Minute)
		spec.Start = &anchor
	}
	return spec, nil
}
