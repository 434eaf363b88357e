//go:build e2e

package tests

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConsoleSchedulesInBrowser drives the console's Schedules pages in
// headless Chromium (tests/console/schedules.mjs) at 1,280 × 800, in a
// browser time zone that is not UTC, against baton dev on its
// controllable clock: 51 schedules created through the API (more than
// the list's page), the clock moved
// so that one fires (a started run that waits on a client tool, then
// fire times skipped because it is unfinished, then one skipped while
// paused); the list with each one's next fire times, state and last
// run; the history; a scheduled run's page naming its schedule; Pause
// and Resume; Delete after a confirmation; every button's label at 4.5:1
// or more, no sideways scroll, no CSP violation. The screenshots go to
// tests/console/artifacts.
func TestConsoleSchedulesInBrowser(t *testing.T) {
	browser := chromiumPath(t)
	node := consoleNode(t)
	d := startDev(t, append(devArgs(t), "--clock-offset", minuteStart().String()))
	fired := createSchedule(t, d, `{"agent":"e2e","cron":"* * * * *","timezone":"Europe/Lisbon","request":`+scheduleSlow+`}`)["schedule_id"].(string)
	weekday := createSchedule(t, d, `{"agent":"e2e","cron":"0 9 * * MON-FRI","timezone":"Europe/Lisbon","missed":"run_once","request":`+scheduleDone+`}`)["schedule_id"].(string)
	at := time.Now().UTC().Add(72 * time.Hour).Truncate(time.Minute).Format(time.RFC3339)
	doomed := createSchedule(t, d, `{"agent":"e2e","at":"`+at+`","paused":true,"request":`+scheduleDone+`}`)["schedule_id"].(string)
	// More than the list's page (50), all of them on a day's fire time.
	for i := 0; i < 48; i++ {
		createSchedule(t, d, fmt.Sprintf(`{"agent":"e2e","cron":"%d %d * * *","timezone":"Asia/Tokyo","request":%s}`, i%60, i%24, scheduleDone))
	}

	// A minute: a run that waits on a client tool; another: a fire time
	// skipped while it is unfinished; paused across a third, resumed: one
	// skipped as paused. (The wall clock may pass a minute too: that
	// fire time, missed, is recorded as skipped.)
	outcome := func(outcome, reason string) func(map[string]any) bool {
		return func(tr map[string]any) bool {
			r, _ := tr["reason"].(string)
			return tr["outcome"] == outcome && strings.HasPrefix(r, reason)
		}
	}
	d.advance(t, time.Minute)
	awaitTrigger(t, d, fired, "a started run", outcome("started", ""))
	d.advance(t, time.Minute)
	awaitTrigger(t, d, fired, "an overlap", outcome("skipped", "overlap: "))
	if r := d.call(t, "PATCH", "/v1/schedules/"+fired, tokAcme, `{"paused":true}`); r.status != 200 {
		t.Fatalf("pause: %d %v", r.status, r.body)
	}
	d.advance(t, time.Minute)
	if r := d.call(t, "PATCH", "/v1/schedules/"+fired, tokAcme, `{"paused":false}`); r.status != 200 {
		t.Fatalf("resume: %d %v", r.status, r.body)
	}
	awaitTrigger(t, d, fired, "a fire time skipped while paused", outcome("skipped", "paused: "))

	artifacts, _ := filepath.Abs("console/artifacts")
	var out struct{ Passed []string }
	runNodeWith(t, node, "console/schedules.mjs", map[string]any{"base": d.base, "token": tokAcme, "chromium": browser, "artifacts": artifacts,
		"fired": fired, "weekday": weekday, "doomed": doomed}, &out)
	if len(out.Passed) != 5 {
		t.Fatalf("passed %v", out.Passed)
	}
	// What the buttons did is what the API holds.
	if r := d.call(t, "GET", "/v1/schedules/"+weekday, tokAcme, ""); r.status != 200 || r.body["paused"] != false {
		t.Fatalf("after Pause and Resume: %d %v", r.status, r.body)
	}
	if r := d.call(t, "GET", "/v1/schedules/"+doomed, tokAcme, ""); r.status != 404 {
		t.Fatalf("after Delete: %d %v", r.status, r.body)
	}
	t.Logf("schedules in Chromium: %s; screenshots in %s", strings.Join(out.Passed, ", "), artifacts)
}
