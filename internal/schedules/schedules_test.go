package schedules_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/runspec"
	"github.com/baton-agents/baton/internal/schedules"
)

const agentsJSON = `{"agents":[{"slug":"demo","model":{"provider":"scripted"},"allow_overrides":["model"]}]}`

// clock is a clock the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

type env struct {
	a     *app.App
	svc   *schedules.Service
	clock *clock
	p     *core.Principal
}

var t0 = time.Date(2026, 5, 6, 10, 0, 30, 0, time.UTC)

func newEnv(t *testing.T, cfg schedules.Config, mutate ...func(*app.Config)) *env {
	t.Helper()
	c := &clock{t: t0}
	conf := app.Config{Stores: app.Stores{Memory: true, Visibility: time.Minute}, Agents: app.Agents{JSON: agentsJSON}, Providers: []string{"scripted"}}
	for _, m := range mutate {
		m(&conf)
	}
	a, err := app.Build(context.Background(), conf, app.Deps{Clock: c, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	svc := schedules.New(a.Runner.Store, a.Runner, a.Schedules.Validator, nil, c, slog.New(slog.DiscardHandler), cfg)
	return &env{a: a, svc: svc, clock: c, p: &core.Principal{ActorID: "ops", AuthSource: "bearer_token", Tenant: "acme", CapabilityCeiling: []string{"runs:write"}}}
}

func str(s string) *string { return &s }

func body(cron string) schedules.Body {
	return schedules.Body{Agent: str("demo"), Cron: str(cron), Request: json.RawMessage(`{"messages":[{"role":"user","content":"digest"}],"model":{"provider":"scripted","turns":[{"content":"Digest sent."}]}}`)}
}

// drain runs every queued step.
func (e *env) drain(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for {
		ds, err := e.a.Steps.Receive(ctx, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) == 0 {
			return
		}
		var step core.Step
		if err := json.Unmarshal(ds[0].Body, &step); err != nil {
			t.Fatal(err)
		}
		if err := e.a.Runner.HandleStep(ctx, step, durable.Attempt{ReceiveCount: ds[0].ReceiveCount, Owner: ds[0].ReceiptHandle}); err != nil {
			t.Fatal(err)
		}
		if err := e.a.Steps.Delete(ctx, ds[0].ReceiptHandle); err != nil {
			t.Fatal(err)
		}
	}
}

func (e *env) triggers(t *testing.T, id string) []core.Trigger {
	t.Helper()
	list, _, err := e.svc.Triggers(context.Background(), "acme", id, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	return list
}

func (e *env) tick(t *testing.T, at time.Time) {
	t.Helper()
	e.clock.set(at)
	if err := e.svc.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func apiErr(t *testing.T, err error) *runspec.Error {
	t.Helper()
	var ae *runspec.Error
	if !errors.As(err, &ae) {
		t.Fatalf("want an API error, got %v", err)
	}
	return ae
}

// TestBadInputNamesTheField: each refusal is a 400 naming its field,
// and nothing is stored.
func TestBadInputNamesTheField(t *testing.T) {
	e := newEnv(t, schedules.Config{MinInterval: 5 * time.Minute})
	ctx := context.Background()
	past := "2020-01-01T00:00:00Z"
	cases := []struct {
		name, field string
		edit        func(*schedules.Body)
	}{
		{"no agent", "agent", func(b *schedules.Body) { b.Agent = nil }},
		{"no timing", "cron", func(b *schedules.Body) { b.Cron = nil }},
		{"cron and at", "cron", func(b *schedules.Body) { b.At = str("2030-01-01T00:00:00Z") }},
		{"bad cron", "cron", func(b *schedules.Body) { b.Cron = str("61 * * * *") }},
		{"garbage cron", "cron", func(b *schedules.Body) { b.Cron = str("every day") }},
		{"too frequent", "cron", func(b *schedules.Body) { b.Cron = str("*/2 * * * *") }},
		{"too frequent rate", "cron", func(b *schedules.Body) { b.Cron = str("rate(1 minute)") }},
		{"dom and dow", "cron", func(b *schedules.Body) { b.Cron = str("0 9 1 * MON") }},
		{"unknown zone", "timezone", func(b *schedules.Body) { b.Timezone = str("Mars/Olympus_Mons") }},
		{"bad at", "at", func(b *schedules.Body) { b.Cron, b.At = nil, str("tomorrow") }},
		{"at in the past", "at", func(b *schedules.Body) { b.Cron, b.At = nil, str(past) }},
		{"start after end", "start", func(b *schedules.Body) {
			b.Start, b.End = json.RawMessage(`"2030-02-01T00:00:00Z"`), json.RawMessage(`"2030-01-01T00:00:00Z"`)
		}},
		{"bad start", "start", func(b *schedules.Body) { b.Start = json.RawMessage(`"soon"`) }},
		{"end in the past", "end", func(b *schedules.Body) { b.End = json.RawMessage(`"` + past + `"`) }},
		{"overlap", "overlap", func(b *schedules.Body) { b.Overlap = str("queue") }},
		{"missed", "missed", func(b *schedules.Body) { b.Missed = str("all") }},
		{"no request", "request", func(b *schedules.Body) { b.Request = nil }},
		{"agent in request", "request", func(b *schedules.Body) {
			b.Request = json.RawMessage(`{"agent":"demo","messages":[{"role":"user","content":"x"}]}`)
		}},
		{"request without messages", "request", func(b *schedules.Body) { b.Request = json.RawMessage(`{"metadata":{}}`) }},
		{"request field unknown", "request.colour", func(b *schedules.Body) {
			b.Request = json.RawMessage(`{"colour":"red","messages":[{"role":"user","content":"x"}]}`)
		}},
		{"unknown agent", "agent", func(b *schedules.Body) { b.Agent = str("nobody") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := body("0 9 * * *")
			c.edit(&b)
			_, err := e.svc.Create(ctx, "acme", e.p, b)
			ae := apiErr(t, err)
			if ae.Status != 400 || ae.Details["field"] != c.field {
				t.Fatalf("got %d %s %v (%s), want 400 naming %s", ae.Status, ae.Code, ae.Details, ae.Message, c.field)
			}
			if !strings.Contains(ae.Message, strings.Split(c.field, ".")[0]) {
				t.Fatalf("message %q does not name %s", ae.Message, c.field)
			}
		})
	}
	if list, _, _ := e.svc.List(ctx, "acme", 100, ""); len(list) != 0 {
		t.Fatalf("refused schedules were stored: %+v", list)
	}
}

// TestTenantLimit: the limit is a 429 naming it; a delete frees a place.
func TestTenantLimit(t *testing.T) {
	e := newEnv(t, schedules.Config{MaxPerTenant: 2})
	ctx := context.Background()
	var ids []string
	for i := 0; i < 2; i++ {
		v, err := e.svc.Create(ctx, "acme", e.p, body("0 9 * * *"))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, v.ID)
	}
	_, err := e.svc.Create(ctx, "acme", e.p, body("0 9 * * *"))
	ae := apiErr(t, err)
	if ae.Status != 429 || ae.Code != "schedule_limit_reached" || ae.Details["limit"] != 2 {
		t.Fatalf("got %d %s %v", ae.Status, ae.Code, ae.Details)
	}
	if _, err := e.svc.Create(ctx, "other", e.p, body("0 9 * * *")); err != nil {
		t.Fatalf("another tenant has its own limit: %v", err)
	}
	if err := e.svc.Delete(ctx, "acme", ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Create(ctx, "acme", e.p, body("0 9 * * *")); err != nil {
		t.Fatalf("after a delete: %v", err)
	}
	if _, err := e.svc.Get(ctx, "other", ids[1]); apiErr(t, err).Status != 404 {
		t.Fatal("another tenant's schedule was found")
	}
}

// TestThreeFireTimesThreeRuns: each fire time the clock reaches starts
// one run, tagged with the schedule; ticking again starts nothing more.
func TestThreeFireTimesThreeRuns(t *testing.T) {
	e := newEnv(t, schedules.Config{})
	ctx := context.Background()
	v, err := e.svc.Create(ctx, "acme", e.p, body("* * * * *"))
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Time{t0.Truncate(time.Minute).Add(time.Minute), t0.Truncate(time.Minute).Add(2 * time.Minute)}
	if len(v.NextFireTimes) != schedules.NextFireTimes || !v.NextFireTimes[0].Equal(want[0]) || !v.NextFireTimes[1].Equal(want[1]) {
		t.Fatalf("next fire times %v", v.NextFireTimes)
	}
	e.tick(t, t0) // nothing due yet
	for i := 1; i <= 3; i++ {
		e.tick(t, t0.Truncate(time.Minute).Add(time.Duration(i)*time.Minute+2*time.Second))
		e.tick(t, t0.Truncate(time.Minute).Add(time.Duration(i)*time.Minute+3*time.Second))
		e.drain(t)
	}
	trs := e.triggers(t, v.ID)
	if len(trs) != 3 {
		t.Fatalf("%d triggers: %+v", len(trs), trs)
	}
	for i, tr := range trs {
		fire := t0.Truncate(time.Minute).Add(time.Duration(3-i) * time.Minute)
		if tr.Outcome != core.TriggerStarted || !tr.FireTime.Equal(fire) || tr.RunID != core.ScheduledRunID(v.ID, fire) {
			t.Fatalf("trigger %d: %+v", i, tr)
		}
		snap, err := e.a.Runner.Get(ctx, "acme", tr.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if s := snap.State.Config.Schedule; s == nil || s.ID != v.ID || !s.FireTime.Equal(fire) || snap.State.Status != core.StatusCompleted {
			t.Fatalf("run %s: schedule %+v, status %s", tr.RunID, s, snap.State.Status)
		}
		if p := snap.State.Config.Principal; p == nil || p.ActorID != "ops" || p.AuthSource != schedules.AuthSource {
			t.Fatalf("run principal %+v", p)
		}
	}
	// A second delivery of a fire time lands on the same record.
	tr, err := e.svc.Fire(ctx, "acme", v.ID, trs[0].FireTime, schedules.FireOptions{})
	if err != nil || tr.RunID != trs[0].RunID {
		t.Fatalf("refire: %+v %v", tr, err)
	}
	page, err := e.a.Runner.List(ctx, "acme", core.RunListQuery{Limit: 10})
	if err != nil || len(page.Runs) != 3 || page.Runs[0].ScheduleID != v.ID {
		t.Fatalf("runs %+v %v", page.Runs, err)
	}
	got, _ := e.svc.Get(ctx, "acme", v.ID)
	if got.LastRunID != trs[0].RunID {
		t.Fatalf("last run %s, want %s", got.LastRunID, trs[0].RunID)
	}
}

// TestOverlapSkip: while the previous run is unfinished, a fire time is
// skipped and the skip recorded; with allow, it starts a run.
func TestOverlapSkip(t *testing.T) {
	for _, overlap := range []string{core.OverlapSkip, core.OverlapAllow} {
		t.Run(overlap, func(t *testing.T) {
			e := newEnv(t, schedules.Config{})
			b := body("* * * * *")
			b.Overlap = str(overlap)
			v, err := e.svc.Create(context.Background(), "acme", e.p, b)
			if err != nil {
				t.Fatal(err)
			}
			base := t0.Truncate(time.Minute)
			e.tick(t, base.Add(time.Minute+time.Second)) // the first run stays queued: no step runs
			e.tick(t, base.Add(2*time.Minute+time.Second))
			trs := e.triggers(t, v.ID)
			if len(trs) != 2 || trs[1].Outcome != core.TriggerStarted {
				t.Fatalf("triggers %+v", trs)
			}
			if overlap == core.OverlapAllow {
				if trs[0].Outcome != core.TriggerStarted {
					t.Fatalf("allow: %+v", trs[0])
				}
				return
			}
			if trs[0].Outcome != core.TriggerSkipped || trs[0].RunID != "" || !strings.HasPrefix(trs[0].Reason, "overlap: the previous run "+trs[1].RunID) {
				t.Fatalf("skip: %+v", trs[0])
			}
			e.drain(t) // the first run finishes: the next fire time starts one
			e.tick(t, base.Add(3*time.Minute+time.Second))
			if trs = e.triggers(t, v.ID); trs[0].Outcome != core.TriggerStarted {
				t.Fatalf("after the run finished: %+v", trs[0])
			}
		})
	}
}

// TestPausedFiresNone and the missed policy on resume: a paused schedule
// fires nothing; resuming records the fire times it missed as skipped,
// or with run_once starts one run for the latest of them.
func TestPausedFiresNone(t *testing.T) {
	for _, missed := range []string{core.MissedSkip, core.MissedRunOnce} {
		t.Run(missed, func(t *testing.T) {
			e := newEnv(t, schedules.Config{})
			ctx := context.Background()
			b := body("* * * * *")
			b.Missed, b.Paused = str(missed), func() *bool { v := true; return &v }()
			v, err := e.svc.Create(ctx, "acme", e.p, b)
			if err != nil {
				t.Fatal(err)
			}
			if len(v.NextFireTimes) != 0 || !v.Paused {
				t.Fatalf("a paused schedule lists fire times: %+v", v)
			}
			base := t0.Truncate(time.Minute)
			for i := 1; i <= 3; i++ {
				e.tick(t, base.Add(time.Duration(i)*time.Minute+time.Second))
			}
			if trs := e.triggers(t, v.ID); len(trs) != 0 {
				t.Fatalf("a paused schedule fired: %+v", trs)
			}
			resume := false
			if _, err := e.svc.Update(ctx, "acme", v.ID, e.p, schedules.Body{Paused: &resume}); err != nil {
				t.Fatal(err)
			}
			e.tick(t, base.Add(3*time.Minute+2*time.Second))
			trs := e.triggers(t, v.ID)
			if len(trs) != 3 {
				t.Fatalf("triggers %+v", trs)
			}
			started := 0
			for _, tr := range trs {
				if tr.Outcome == core.TriggerStarted {
					started++
					if !tr.FireTime.Equal(base.Add(3*time.Minute)) || !strings.HasPrefix(tr.Reason, "caught_up: ") {
						t.Fatalf("the caught-up run: %+v", tr)
					}
				} else if tr.Outcome != core.TriggerSkipped || !strings.HasPrefix(tr.Reason, "paused: ") {
					t.Fatalf("a missed fire time: %+v", tr)
				}
			}
			if want := map[string]int{core.MissedSkip: 0, core.MissedRunOnce: 1}[missed]; started != want {
				t.Fatalf("%d runs started, want %d: %+v", started, want, trs)
			}
		})
	}
}

// TestMissedWhileDown: fire times the scheduler reaches later than its
// grace were missed (it was not running): skip records them, run_once
// starts one run for the latest.
func TestMissedWhileDown(t *testing.T) {
	for _, missed := range []string{core.MissedSkip, core.MissedRunOnce} {
		t.Run(missed, func(t *testing.T) {
			e := newEnv(t, schedules.Config{})
			b := body("*/5 * * * *")
			b.Missed = str(missed)
			v, err := e.svc.Create(context.Background(), "acme", e.p, b)
			if err != nil {
				t.Fatal(err)
			}
			// Down from 10:00:30 until 10:17:10: 10:05, 10:10, 10:15 missed.
			e.tick(t, t0.Truncate(time.Minute).Add(17*time.Minute+10*time.Second))
			e.tick(t, t0.Truncate(time.Minute).Add(17*time.Minute+20*time.Second))
			trs := e.triggers(t, v.ID)
			if len(trs) != 3 {
				t.Fatalf("triggers %+v", trs)
			}
			runs := 0
			for _, tr := range trs {
				if tr.Outcome == core.TriggerStarted {
					runs++
					if tr.FireTime.Minute() != 15 || !strings.Contains(tr.Reason, "not running") {
						t.Fatalf("%+v", tr)
					}
				} else if !strings.HasPrefix(tr.Reason, "missed: ") {
					t.Fatalf("%+v", tr)
				}
			}
			if want := map[string]int{core.MissedSkip: 0, core.MissedRunOnce: 1}[missed]; runs != want {
				t.Fatalf("%d runs, want %d", runs, want)
			}
		})
	}
}

// TestFailedTriggerIsRecorded: a fire time that cannot start its run
// (the tenant at its active-run limit) is recorded with the reason.
func TestFailedTriggerIsRecorded(t *testing.T) {
	e := newEnv(t, schedules.Config{}, func(c *app.Config) { c.Limits.MaxActiveRuns = 1 })
	b := body("* * * * *")
	b.Overlap = str(core.OverlapAllow)
	v, err := e.svc.Create(context.Background(), "acme", e.p, b)
	if err != nil {
		t.Fatal(err)
	}
	base := t0.Truncate(time.Minute)
	e.tick(t, base.Add(time.Minute+time.Second))
	e.tick(t, base.Add(2*time.Minute+time.Second))
	trs := e.triggers(t, v.ID)
	if len(trs) != 2 || trs[0].Outcome != core.TriggerFailed || !strings.HasPrefix(trs[0].Reason, "too_many_active_runs: ") || trs[0].RunID != "" {
		t.Fatalf("triggers %+v", trs)
	}
}

// TestStaleFire: a fire time that is not the schedule's starts nothing.
func TestStaleFire(t *testing.T) {
	e := newEnv(t, schedules.Config{})
	v, err := e.svc.Create(context.Background(), "acme", e.p, body("0 9 * * *"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Fire(context.Background(), "acme", v.ID, time.Date(2026, 5, 7, 9, 1, 0, 0, time.UTC), schedules.FireOptions{})
	if !errors.Is(err, schedules.ErrStale) {
		t.Fatalf("got %v", err)
	}
	if _, err = e.svc.Fire(context.Background(), "other", v.ID, time.Date(2026, 5, 7, 9, 0, 0, 0, time.UTC), schedules.FireOptions{}); !errors.Is(err, schedules.ErrStale) {
		t.Fatalf("another tenant's fire: %v", err)
	}
	if trs := e.triggers(t, v.ID); len(trs) != 0 {
		t.Fatalf("%+v", trs)
	}
}

// TestDaylightSavingNextFireTimes: in Europe/Lisbon in 2026, 01:30 does
// not exist on 29 March (skipped) and occurs twice on 25 October (fires
// once, at the first).
func TestDaylightSavingNextFireTimes(t *testing.T) {
	e := newEnv(t, schedules.Config{})
	ctx := context.Background()
	b := body("30 1 * * *")
	b.Timezone = str("Europe/Lisbon")
	e.clock.set(time.Date(2026, 3, 27, 12, 0, 0, 0, time.UTC))
	v, err := e.svc.Create(ctx, "acme", e.p, b)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z", "2026-03-31T00:30:00Z"}
	for i, w := range want {
		if got := v.NextFireTimes[i].Format(time.RFC3339); got != w {
			t.Fatalf("spring: fire %d at %s, want %s (all: %v)", i, got, w, v.NextFireTimes)
		}
	}
	e.clock.set(time.Date(2026, 10, 24, 12, 0, 0, 0, time.UTC))
	v, err = e.svc.Get(ctx, "acme", v.ID)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}
	for i, w := range want {
		if got := v.NextFireTimes[i].Format(time.RFC3339); got != w {
			t.Fatalf("autumn: fire %d at %s, want %s (all: %v)", i, got, w, v.NextFireTimes)
		}
	}
}

// failingScheduler refuses every change.
type failingScheduler struct{ synced, removed int }

func (f *failingScheduler) Sync(context.Context, core.Schedule, core.ScheduleSpec) error {
	f.synced++
	return errors.New("ThrottlingException")
}
func (f *failingScheduler) Remove(context.Context, core.Schedule) error {
	f.removed++
	return errors.New("ThrottlingException")
}

// TestSchedulerRefusalChangesNothing: when EventBridge Scheduler refuses,
// the store is left as it was (create, update, delete).
func TestSchedulerRefusalChangesNothing(t *testing.T) {
	e := newEnv(t, schedules.Config{})
	ctx := context.Background()
	v, err := e.svc.Create(ctx, "acme", e.p, body("0 9 * * *"))
	if err != nil {
		t.Fatal(err)
	}
	f := &failingScheduler{}
	e.svc.Scheduler = f
	if _, err := e.svc.Create(ctx, "acme", e.p, body("0 9 * * *")); apiErr(t, err).Code != "scheduler_unavailable" {
		t.Fatal(err)
	}
	if list, _, _ := e.svc.List(ctx, "acme", 10, ""); len(list) != 1 {
		t.Fatalf("a refused create was kept: %d schedules", len(list))
	}
	if _, err := e.svc.Update(ctx, "acme", v.ID, e.p, schedules.Body{Cron: str("0 10 * * *")}); apiErr(t, err).Code != "scheduler_unavailable" {
		t.Fatal(err)
	}
	if got, _ := e.svc.Get(ctx, "acme", v.ID); got.Cron != "0 9 * * *" {
		t.Fatalf("a refused update was kept: %+v", got)
	}
	if err := e.svc.Delete(ctx, "acme", v.ID); apiErr(t, err).Code != "scheduler_unavailable" {
		t.Fatal(err)
	}
	if _, err := e.svc.Get(ctx, "acme", v.ID); err != nil {
		t.Fatalf("a refused delete deleted: %v", err)
	}
	if f.synced != 2 || f.removed != 1 {
		t.Fatalf("scheduler calls: %+v", f)
	}
}

// TestPatch: fields change one by one; a new expression fires from the
// update on; a new request keeps the alias chosen before.
func TestPatch(t *testing.T) {
	e := newEnv(t, schedules.Config{})
	ctx := context.Background()
	b := body("0 9 * * *")
	b.Alias = str("default")
	v, err := e.svc.Create(ctx, "acme", e.p, b)
	if err != nil {
		t.Fatal(err)
	}
	if v.Alias != "default" || strings.Contains(string(v.Request), "agent") {
		t.Fatalf("view %+v request %s", v, v.Request)
	}
	got, err := e.svc.Update(ctx, "acme", v.ID, e.p, schedules.Body{Cron: str("0 18 * * *"), Timezone: str("America/New_York"),
		Request: json.RawMessage(`{"messages":[{"role":"user","content":"evening"}]}`), End: json.RawMessage(`"2027-01-01T00:00:00Z"`)})
	if err != nil {
		t.Fatal(err)
	}
	if got.Cron != "0 18 * * *" || got.Timezone != "America/New_York" || got.Alias != "default" || !strings.Contains(string(got.Request), "evening") ||
		got.End == nil || got.NextFireTimes[0].Format(time.RFC3339) != "2026-05-06T22:00:00Z" {
		t.Fatalf("patched %+v (%s)", got, got.Request)
	}
	got, err = e.svc.Update(ctx, "acme", v.ID, e.p, schedules.Body{End: json.RawMessage(`null`), Overlap: str("allow")})
	if err != nil || got.End != nil || got.Overlap != "allow" || got.Cron != "0 18 * * *" {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := e.svc.Update(ctx, "acme", v.ID, e.p, schedules.Body{Cron: str("nope")}); apiErr(t, err).Details["field"] != "cron" {
		t.Fatal(err)
	}
	if _, err := e.svc.Update(ctx, "other", v.ID, e.p, schedules.Body{Paused: new(bool)}); apiErr(t, err).Status != 404 {
		t.Fatal(err)
	}
}

// TestAgentRemoved: a schedule whose agent is no longer deployed records
// each fire time as failed with the reason, and can still be paused and
// deleted.
func TestAgentRemoved(t *testing.T) {
	e := newEnv(t, schedules.Config{})
	ctx := context.Background()
	v, err := e.svc.Create(ctx, "acme", e.p, body("* * * * *"))
	if err != nil {
		t.Fatal(err)
	}
	// The deployment drops the agent: the stored request names one it
	// no longer has.
	sc, err := e.a.Runner.Store.GetSchedule(ctx, "acme", v.ID)
	if err != nil {
		t.Fatal(err)
	}
	sc.Agent, sc.Version = "retired", sc.Version+1
	sc.Request = json.RawMessage(strings.Replace(string(sc.Request), `"agent":"demo"`, `"agent":"retired"`, 1))
	if err := e.a.Runner.Store.UpdateSchedule(ctx, sc); err != nil {
		t.Fatal(err)
	}
	e.tick(t, t0.Truncate(time.Minute).Add(time.Minute+time.Second))
	trs := e.triggers(t, v.ID)
	if len(trs) != 1 || trs[0].Outcome != core.TriggerFailed || !strings.HasPrefix(trs[0].Reason, "unknown_agent: ") {
		t.Fatalf("triggers %+v", trs)
	}
	paused := true
	if got, err := e.svc.Update(ctx, "acme", v.ID, e.p, schedules.Body{Paused: &paused}); err != nil || !got.Paused {
		t.Fatalf("pause: %+v %v", got, err)
	}
	if err := e.svc.Delete(ctx, "acme", v.ID); err != nil {
		t.Fatal(err)
	}
}
