package intake_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/intake"
	"github.com/baton-agents/baton/internal/schedules"
)

// schedule creates a one-minute schedule of acme's.
func (e *env) schedule(t *testing.T) string {
	t.Helper()
	agent, cron := "demo", "* * * * *"
	v, err := e.a.Schedules.Create(context.Background(), "acme", &core.Principal{ActorID: "ops", Tenant: "acme", CapabilityCeiling: []string{"runs:write"}},
		schedules.Body{Agent: &agent, Cron: &cron, Request: json.RawMessage(`{"messages":[{"role":"user","content":"digest"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	return v.ID
}

func fireMsg(id, tenant, schedule, fire string, receives int) events.SQSMessage {
	b, _ := json.Marshal(map[string]any{"schedule_fire": core.ScheduleFire{Tenant: tenant, ScheduleID: schedule, FireTime: fire}})
	m := msg(id, string(b))
	m.Attributes = map[string]string{"ApproximateReceiveCount": string(rune('0' + receives))}
	return m
}

// TestScheduleFireStartsOneRun: EventBridge Scheduler's message for a
// fire time starts the schedule's run once, however often it comes, and
// records the trigger.
func TestScheduleFireStartsOneRun(t *testing.T) {
	e := newEnv(t)
	id := e.schedule(t)
	fire := "2026-05-06T07:09:00Z" // the clock is at 07:08:09
	for i := 1; i <= 3; i++ {
		if failed := e.handle(t, fireMsg("m-"+string(rune('0'+i)), "acme", id, fire, 1)); len(failed) != 0 {
			t.Fatalf("failed: %v", failed)
		}
	}
	if n := e.runs.Load(); n != 1 {
		t.Fatalf("%d runs", n)
	}
	trs, _, err := e.a.Schedules.Triggers(context.Background(), "acme", id, 10, "")
	if err != nil || len(trs) != 1 || trs[0].Outcome != core.TriggerStarted || trs[0].FireTime.Format(time.RFC3339) != fire {
		t.Fatalf("triggers %+v %v", trs, err)
	}
	rec, err := e.a.Runner.Get(context.Background(), "acme", trs[0].RunID)
	if err != nil || rec.State.Config.Schedule.ScheduleID() != id {
		t.Fatalf("run %+v %v", rec.State.Config.Schedule, err)
	}
	if len(e.deadLetters(t)) != 0 {
		t.Fatal("a fire was dead-lettered")
	}
}

// TestScheduleFireRefusals: a malformed fire is dead-lettered with the
// reason; a stale one (not a fire time of the schedule, or of another
// tenant's schedule) is dropped, starting nothing.
func TestScheduleFireRefusals(t *testing.T) {
	e := newEnv(t)
	id := e.schedule(t)
	failed := e.handle(t,
		msg("m-bad", `{"schedule_fire":{"tenant":"acme","schedule_id":"`+id+`","fire_time":"soon"}}`),
		msg("m-unknown", `{"schedule_fire":{"tenant":"acme"},"extra":1}`),
		fireMsg("m-stale", "acme", id, "2026-05-06T07:09:30Z", 1),
		fireMsg("m-other", "globex", id, "2026-05-06T07:09:00Z", 1))
	if len(failed) != 0 {
		t.Fatalf("failed: %v", failed)
	}
	dead := e.deadLetters(t)
	if len(dead) != 2 {
		t.Fatalf("dead letters %+v", dead)
	}
	want := map[string]string{"m-bad": "invalid_request", "m-unknown": "unknown_field"}
	for _, d := range dead {
		src := d.Attributes[intake.AttrSourceMessageID]
		if code := d.Attributes[intake.AttrErrorCode]; code == "" || code != want[src] || d.Attributes[intake.AttrErrorMessage] == "" {
			t.Fatalf("dead letter %+v, want code %q", d, want[src])
		}
		delete(want, src)
	}
	if len(want) != 0 {
		t.Fatalf("not dead-lettered: %v", want)
	}
	if n := e.runs.Load(); n != 0 {
		t.Fatalf("%d runs", n)
	}
	if trs, _, _ := e.a.Schedules.Triggers(context.Background(), "acme", id, 10, ""); len(trs) != 0 {
		t.Fatalf("triggers %+v", trs)
	}
}

// TestScheduleFireTransientFailure: a store outage is retried; on the
// message's last receive the fire time is recorded as failed.
func TestScheduleFireTransientFailure(t *testing.T) {
	e := newEnv(t)
	id := e.schedule(t)
	e.down.Store(true)
	if failed := e.handle(t, fireMsg("m-1", "acme", id, "2026-05-06T07:09:00Z", 1)); len(failed) != 1 {
		t.Fatalf("first receive: failures %v, want a retry", failed)
	}
	if trs, _, _ := e.a.Schedules.Triggers(context.Background(), "acme", id, 10, ""); len(trs) != 0 {
		t.Fatalf("recorded before the last receive: %+v", trs)
	}
	if failed := e.handle(t, fireMsg("m-1", "acme", id, "2026-05-06T07:09:00Z", 5)); len(failed) != 0 {
		t.Fatalf("last receive: failures %v", failed)
	}
	trs, _, _ := e.a.Schedules.Triggers(context.Background(), "acme", id, 10, "")
	if len(trs) != 1 || trs[0].Outcome != core.TriggerFailed || !strings.Contains(trs[0].Reason, "table unavailable") {
		t.Fatalf("triggers %+v", trs)
	}
}
