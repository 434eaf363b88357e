//go:build e2e

package tests

import (
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// Scheduled runs on baton dev's controllable clock (--clock-offset):
// POST /_dev/clock moves it forward, and the in-process scheduler fires
// what came due.

const (
	// scheduleDone is a run request whose run completes at once.
	scheduleDone = `{"messages":[{"role":"user","content":"morning digest"}],"model":{"provider":"scripted","turns":[{"content":"Digest sent."}]}}`
	// scheduleSlow is one whose run waits on a client tool: it stays
	// unfinished.
	scheduleSlow = `{"messages":[{"role":"user","content":"triage"}],` + clientTools + `,"model":{"provider":"scripted","turns":[
		{"tool_calls":[{"id":"c1","name":"client/get_calendar","parameters":{"day":"mon"}}]},{"content":"done"}]}}`
)

// minuteStart is a clock offset that puts baton dev's clock 5 s past a
// minute: its own passing then reaches no fire time of a one-minute
// cron for most of a minute, so the only fire times a test sees are the
// ones it moves the clock to.
func minuteStart() time.Duration {
	now := time.Now()
	return now.Truncate(time.Minute).Add(time.Minute + 5*time.Second).Sub(now).Round(time.Millisecond)
}

// advance moves baton dev's clock forward.
func (d *dev) advance(t *testing.T, by time.Duration) time.Time {
	t.Helper()
	r := d.call(t, "POST", "/_dev/clock", "", fmt.Sprintf(`{"advance":%q}`, by.String()))
	if r.status != 200 {
		t.Fatalf("advance the clock: %d %v", r.status, r.body)
	}
	now, err := time.Parse(time.RFC3339Nano, r.body["now"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return now
}

func createSchedule(t *testing.T, d *dev, body string) map[string]any {
	t.Helper()
	r := d.call(t, "POST", "/v1/schedules", tokAcme, body)
	if r.status != 201 {
		t.Fatalf("create schedule: %d %v", r.status, r.body)
	}
	return r.body
}

func scheduleTriggers(t *testing.T, d *dev, id string) []map[string]any {
	t.Helper()
	r := d.call(t, "GET", "/v1/schedules/"+id+"/triggers", tokAcme, "")
	if r.status != 200 {
		t.Fatalf("triggers: %d %v", r.status, r.body)
	}
	var out []map[string]any
	for _, x := range r.body["triggers"].([]any) {
		out = append(out, x.(map[string]any))
	}
	return out
}

// awaitTriggers waits until the schedule has n triggers.
func awaitTriggers(t *testing.T, d *dev, id string, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := scheduleTriggers(t, d, id)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("schedule %s: %d triggers, want %d: %v", id, len(got), n, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestScheduledRuns: on a one-minute cron, three minutes of the clock
// become three runs, each carrying its schedule in its view, its run
// list entry and its notifications; a paused schedule fires none; with
// overlap skip, fire times that come while the previous run is
// unfinished are skipped and recorded.
func TestScheduledRuns(t *testing.T) {
	eachStore(t, func(t *testing.T, args []string) {
		rcv := &notifyReceiver{}
		srv := httptest.NewServer(rcv)
		defer srv.Close()
		d := startDev(t, append(args, "--clock-offset", minuteStart().String(), "--notify-url", srv.URL+"/events"))
		every := createSchedule(t, d, `{"agent":"e2e","cron":"* * * * *","timezone":"Europe/Lisbon","request":`+scheduleDone+`}`)
		paused := createSchedule(t, d, `{"agent":"e2e","cron":"* * * * *","paused":true,"request":`+scheduleDone+`}`)
		slow := createSchedule(t, d, `{"agent":"e2e","cron":"* * * * *","overlap":"skip","request":`+scheduleSlow+`}`)
		if nft := every["next_fire_times"].([]any); len(nft) != 5 || len(paused["next_fire_times"].([]any)) != 0 {
			t.Fatalf("next fire times: %v; paused: %v", nft, paused["next_fire_times"])
		}
		id := every["schedule_id"].(string)
		for i := 1; i <= 3; i++ {
			d.advance(t, time.Minute)
			awaitTriggers(t, d, id, i)
			awaitTriggers(t, d, slow["schedule_id"].(string), i)
		}
		trs := scheduleTriggers(t, d, id)
		if len(trs) != 3 {
			t.Fatalf("%d triggers: %v", len(trs), trs)
		}
		for _, tr := range trs {
			run, _ := tr["run_id"].(string)
			if tr["outcome"] != "started" || run == "" {
				t.Fatalf("trigger %v", tr)
			}
			v := d.waitStatus(t, run)
			if v["status"] != "completed" || v["schedule_id"] != id || v["scheduled_for"] != tr["fire_time"] {
				t.Fatalf("run %s: status %v schedule %v at %v (trigger %v)", run, v["status"], v["schedule_id"], v["scheduled_for"], tr)
			}
			if ns := rcv.await(t, run, 1); ns[len(ns)-1].Detail["schedule_id"] != id {
				t.Fatalf("notification of %s: %v", run, ns[len(ns)-1].Detail)
			}
		}
		list := d.call(t, "GET", "/v1/runs?limit=20", tokAcme, "")
		n := 0
		for _, r := range list.body["runs"].([]any) {
			if r.(map[string]any)["schedule_id"] == id {
				n++
			}
		}
		if n != 3 {
			t.Fatalf("the run list has %d runs of the schedule, want 3", n)
		}
		if got := scheduleTriggers(t, d, paused["schedule_id"].(string)); len(got) != 0 {
			t.Fatalf("the paused schedule fired: %v", got)
		}
		st := scheduleTriggers(t, d, slow["schedule_id"].(string))
		first := st[2]["run_id"].(string)
		if st[2]["outcome"] != "started" || d.waitStatus(t, first)["status"] != "runtime_tool_pending" {
			t.Fatalf("the slow schedule's first trigger: %v", st[2])
		}
		for _, tr := range st[:2] {
			if tr["outcome"] != "skipped" || tr["run_id"] != nil || !strings.HasPrefix(tr["reason"].(string), "overlap: the previous run "+first) {
				t.Fatalf("an overlapping fire time: %v", tr)
			}
		}
		// Pause, let two fire times pass, resume: nothing runs for them
		// (missed: skip), and they are recorded.
		r := d.call(t, "PATCH", "/v1/schedules/"+id, tokAcme, `{"paused":true}`)
		if r.status != 200 || r.body["paused"] != true {
			t.Fatalf("pause: %d %v", r.status, r.body)
		}
		d.advance(t, 2*time.Minute)
		time.Sleep(1500 * time.Millisecond) // a scheduler tick or more
		if got := scheduleTriggers(t, d, id); len(got) != 3 {
			t.Fatalf("fired while paused: %v", got)
		}
		if r = d.call(t, "PATCH", "/v1/schedules/"+id, tokAcme, `{"paused":false}`); r.status != 200 || r.body["paused"] != false {
			t.Fatalf("resume: %d %v", r.status, r.body)
		}
		trs = scheduleTriggers(t, d, id)
		if len(trs) != 5 || trs[0]["outcome"] != "skipped" || !strings.HasPrefix(trs[0]["reason"].(string), "paused: ") {
			t.Fatalf("after resuming: %v", trs)
		}
		if r = d.call(t, "DELETE", "/v1/schedules/"+id, tokAcme, ""); r.status != 204 {
			t.Fatalf("delete: %d %v", r.status, r.body)
		}
		if r = d.call(t, "GET", "/v1/schedules/"+id, tokAcme, ""); r.status != 404 {
			t.Fatalf("deleted schedule: %d", r.status)
		}
	})
}

// TestScheduleBadInput: over HTTP, bad input is a 400 naming the field,
// another tenant's schedule is a 404, and the tenant's limit a 429.
func TestScheduleBadInput(t *testing.T) {
	d := startDev(t, devArgs(t))
	for _, c := range []struct{ body, field string }{
		{`{"agent":"e2e","cron":"0 25 * * *","request":` + scheduleDone + `}`, "cron"},
		{`{"agent":"e2e","cron":"0 9 * * *","timezone":"Europe/Atlantis","request":` + scheduleDone + `}`, "timezone"},
		{`{"agent":"e2e","cron":"0 9 * * *","start":"2031-01-01T00:00:00Z","end":"2030-01-01T00:00:00Z","request":` + scheduleDone + `}`, "start"},
		{`{"agent":"e2e","at":"2001-01-01T00:00:00Z","request":` + scheduleDone + `}`, "at"},
		{`{"agent":"e2e","cron":"0 9 * * *"}`, "request"},
		{`{"agent":"e2e","cron":"0 9 * * *","request":{"messages":[]}}`, "request"},
		{`{"agent":"e2e","cron":"0 9 * * *","colour":"red","request":` + scheduleDone + `}`, "colour"},
	} {
		r := d.call(t, "POST", "/v1/schedules", tokAcme, c.body)
		if r.status != 400 {
			t.Fatalf("%s: %d %v", c.body, r.status, r.body)
		}
		if f := r.body["error"].(map[string]any)["details"].(map[string]any)["field"]; f != c.field {
			t.Fatalf("%s: field %v, want %s (%v)", c.body, f, c.field, r.body)
		}
	}
	s := createSchedule(t, d, `{"agent":"e2e","cron":"0 9 * * MON-FRI","timezone":"America/New_York","request":`+scheduleDone+`}`)
	id := s["schedule_id"].(string)
	for _, p := range []string{"/v1/schedules/" + id, "/v1/schedules/" + id + "/triggers"} {
		if r := d.call(t, "GET", p, tokGlobex, ""); r.status != 404 {
			t.Fatalf("another tenant reads %s: %d", p, r.status)
		}
	}
	if r := d.call(t, "GET", "/v1/schedules", tokGlobex, ""); r.status != 200 || len(r.body["schedules"].([]any)) != 0 {
		t.Fatalf("another tenant lists: %d %v", r.status, r.body)
	}
}

// TestScheduleLimit: the deployment's limit of schedules per tenant is a
// 429 naming it.
func TestScheduleLimit(t *testing.T) {
	d := launchDev(t, devArgs(t), "BATON_DEV_TOKENS=acme="+tokAcme, "BATON_MAX_SCHEDULES=2")
	for i := 0; i < 2; i++ {
		createSchedule(t, d, `{"agent":"e2e","cron":"0 9 * * *","request":`+scheduleDone+`}`)
	}
	r := d.call(t, "POST", "/v1/schedules", tokAcme, `{"agent":"e2e","cron":"0 9 * * *","request":`+scheduleDone+`}`)
	if r.status != 429 || errCode(r) != "schedule_limit_reached" || r.body["error"].(map[string]any)["details"].(map[string]any)["limit"] != float64(2) {
		t.Fatalf("over the limit: %d %v", r.status, r.body)
	}
}

// TestScheduleMissedAcrossKill: baton dev on the emulators is killed
// (SIGKILL) before a fire time and started again after it: the
// schedule with missed run_once starts exactly one run for it, the one
// with skip none (and records the skip).
func TestScheduleMissedAcrossKill(t *testing.T) {
	if os.Getenv("BATON_TEST_DYNAMODB_ENDPOINT") == "" || os.Getenv("BATON_E2E_BASE_URL") != "" {
		t.Skip("needs baton dev on the emulators: embedded stores do not survive a crash by design")
	}
	args := append(devArgs(t), "--clock-offset", "0s")
	d := startDev(t, args)
	once := createSchedule(t, d, `{"agent":"e2e","cron":"*/10 * * * *","missed":"run_once","request":`+scheduleDone+`}`)
	skip := createSchedule(t, d, `{"agent":"e2e","cron":"*/10 * * * *","missed":"skip","request":`+scheduleDone+`}`)
	fire, err := time.Parse(time.RFC3339, once["next_fire_times"].([]any)[0].(string))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = d.cmd.Wait()
	// Started again 3 minutes after the fire time: past the scheduler's
	// one-minute grace, so the fire time was missed.
	offset := time.Until(fire) + 3*time.Minute
	args[len(args)-1] = offset.Round(time.Second).String()
	d = startDev(t, args)
	ot := awaitTriggers(t, d, once["schedule_id"].(string), 1)
	st := awaitTriggers(t, d, skip["schedule_id"].(string), 1)
	time.Sleep(2500 * time.Millisecond) // more scheduler ticks: nothing more may come
	ot, st = scheduleTriggers(t, d, once["schedule_id"].(string)), scheduleTriggers(t, d, skip["schedule_id"].(string))
	if len(ot) != 1 || ot[0]["outcome"] != "started" || ot[0]["fire_time"] != fire.Format(time.RFC3339) || !strings.HasPrefix(ot[0]["reason"].(string), "caught_up: ") {
		t.Fatalf("run_once: %v", ot)
	}
	if v := d.waitStatus(t, ot[0]["run_id"].(string)); v["status"] != "completed" || v["schedule_id"] != once["schedule_id"] {
		t.Fatalf("the caught-up run: %v", v)
	}
	if len(st) != 1 || st[0]["outcome"] != "skipped" || st[0]["run_id"] != nil || !strings.HasPrefix(st[0]["reason"].(string), "missed: ") {
		t.Fatalf("skip: %v", st)
	}
	list := d.call(t, "GET", "/v1/runs?limit=50", tokAcme, "")
	n := 0
	for _, r := range list.body["runs"].([]any) {
		if sid := r.(map[string]any)["schedule_id"]; sid == once["schedule_id"] || sid == skip["schedule_id"] {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d scheduled runs after the kill, want exactly 1", n)
	}
}
