//go:build e2e

package tests

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestCLISchedules runs baton schedules against baton dev on its
// controllable clock: create from a start-run body file (its agent moved
// to the schedule) and from --input, paused; a refused expression names
// the field; ls lists both as a table and as JSON; the clock moves a
// minute and history shows the run the fire time started, which carries
// the schedule (baton runs show says so); pause and resume change the schedule in the API; rm
// deletes it, and then history is not_found.
func TestCLISchedules(t *testing.T) {
	d := startDev(t, append(devArgs(t), "--clock-offset", minuteStart().String()))
	env := cliEnv(t, d, tokAcme)
	var req map[string]any
	if err := json.Unmarshal([]byte(scheduleDone), &req); err != nil {
		t.Fatal(err)
	}
	req["agent"] = "e2e"
	file := writeJSON(t, req)

	created := regexp.MustCompile(`^created schedule (sch-\S+): e2e, \* \* \* \* \* \(Europe/Lisbon\)\nnext fire times:\n(  .+\n){5}$`)
	r := runCLI(t, env, "", "schedules", "create", "--cron", "* * * * *", "--timezone", "Europe/Lisbon", "--request", file)
	m := created.FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil {
		t.Fatalf("create: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	id := m[1]
	r = runCLI(t, env, "", "schedules", "create", "--agent", "e2e", "--cron", "0 9 * * MON-FRI", "--input", "Send the digest", "--paused", "--json")
	var paused map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &paused); r.code != 0 || err != nil || paused["paused"] != true ||
		!strings.Contains(r.stdout, `"request":{"messages":[{"content":"Send the digest","role":"user"}]}`) {
		t.Fatalf("create --input --paused --json: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if r = runCLI(t, env, "", "schedules", "create", "--agent", "e2e", "--cron", "61 * * * *", "--input", "x"); r.code != 1 ||
		!strings.HasPrefix(r.stderr, "baton schedules create: invalid_request: cron: ") || !strings.HasSuffix(r.stderr, "(HTTP 400)\n") {
		t.Fatalf("a bad cron: exit %d, %q", r.code, r.stderr)
	}
	if r = runCLI(t, env, "", "schedules", "create", "--agent", "e2e", "--input", "x"); r.code != 2 || !strings.Contains(r.stderr, "--cron EXPR or --at TIME") {
		t.Fatalf("no expression: exit %d, %q", r.code, r.stderr)
	}

	r = runCLI(t, env, "", "schedules", "ls")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "ID ") {
		t.Fatalf("ls: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, id+" ") && !strings.HasPrefix(l, paused["schedule_id"].(string)+" ") {
			t.Fatalf("ls row %q", l)
		}
		if i := strings.Index(lines[0], "STATE"); len(l) < i || (l[i:i+6] != "active" && l[i:i+6] != "paused") {
			t.Fatalf("ls: the STATE column is not aligned in %q", l)
		}
	}
	r = runCLI(t, env, "", "schedules", "ls", "--json")
	var list struct {
		Schedules  []map[string]any `json:"schedules"`
		NextCursor *string          `json:"next_cursor"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); r.code != 0 || err != nil || len(list.Schedules) != 2 || list.NextCursor != nil {
		t.Fatalf("ls --json: exit %d, %q", r.code, r.stdout)
	}

	if r = runCLI(t, env, "", "schedules", "history", id); r.code != 0 || r.stdout != "no fire times yet\n" {
		t.Fatalf("history before a fire time: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	// (The wall clock may pass a minute too: that fire time, missed, is
	// recorded as skipped.)
	d.advance(t, time.Minute)
	started := awaitTrigger(t, d, id, "a started run", func(tr map[string]any) bool { return tr["outcome"] == "started" })
	run := started["run_id"].(string)
	if v := d.waitStatus(t, run); v["schedule_id"] != id {
		t.Fatalf("the scheduled run %s: %v", run, v["schedule_id"])
	}
	r = runCLI(t, env, "", "schedules", "history", id)
	lines = strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) < 2 || !strings.HasPrefix(lines[0], "FIRE TIME ") || !strings.Contains(r.stdout, "  started  "+run+"\n") {
		t.Fatalf("history: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if r = runCLI(t, env, "", "runs", "show", run); r.code != 0 || !strings.Contains(r.stdout, "\nscheduled by "+id+" for ") {
		t.Fatalf("runs show of the scheduled run: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}

	if r = runCLI(t, env, "", "schedules", "pause", id); r.code != 0 || r.stdout != "paused schedule "+id+"\n" {
		t.Fatalf("pause: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if g := d.call(t, "GET", "/v1/schedules/"+id, tokAcme, ""); g.body["paused"] != true {
		t.Fatalf("after pause: %v", g.body)
	}
	if r = runCLI(t, env, "", "schedules", "resume", id); r.code != 0 || !strings.HasPrefix(r.stdout, "resumed schedule "+id+"\nnext fire times:\n  ") {
		t.Fatalf("resume: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if g := d.call(t, "GET", "/v1/schedules/"+id, tokAcme, ""); g.body["paused"] != false {
		t.Fatalf("after resume: %v", g.body)
	}
	if r = runCLI(t, env, "", "schedules", "rm", id); r.code != 0 || !strings.HasPrefix(r.stdout, "deleted schedule "+id) {
		t.Fatalf("rm: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if r = runCLI(t, env, "", "schedules", "history", id); r.code != 1 || !strings.HasPrefix(r.stderr, "baton schedules history: not_found: ") {
		t.Fatalf("history of a deleted schedule: exit %d, %q", r.code, r.stderr)
	}
	if r = runCLI(t, cliEnv(t, d, tokGlobex), "", "schedules", "pause", paused["schedule_id"].(string)); r.code != 1 || !strings.Contains(r.stderr, "not_found") {
		t.Fatalf("another tenant pauses acme's schedule: exit %d, %q", r.code, r.stderr)
	}
}

// awaitTrigger waits until the schedule has a trigger for which ok
// holds, and returns it.
func awaitTrigger(t *testing.T, d *dev, id, what string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		trs := scheduleTriggers(t, d, id)
		for _, tr := range trs {
			if ok(tr) {
				return tr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("schedule %s has no trigger with %s: %v", id, what, trs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
