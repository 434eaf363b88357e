package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
)

const scheduleBody = `{"agent":"demo","cron":"0 9 * * MON-FRI","timezone":"Europe/Lisbon",
	"request":{"messages":[{"role":"user","content":"digest"}],"metadata":{"team":"ops"}},"missed":"run_once"}`

func errOf(v map[string]any) (code string, details map[string]any) {
	e, _ := v["error"].(map[string]any)
	code, _ = e["code"].(string)
	details, _ = e["details"].(map[string]any)
	return code, details
}

// TestScheduleRoutes: the schedule routes create, list, read, change and
// delete a tenant's schedules and list their triggers; another tenant's
// schedule is not found on any of them.
func TestScheduleRoutes(t *testing.T) {
	e := newEnv(t)
	st, v, _ := e.do(t, "POST", "/v1/schedules", "tok-acme-123", scheduleBody, nil)
	if st != http.StatusCreated {
		t.Fatalf("create: %d %v", st, v)
	}
	id, _ := v["schedule_id"].(string)
	req, _ := v["request"].(map[string]any)
	if !strings.HasPrefix(id, "sch-") || v["agent"] != "demo" || v["timezone"] != "Europe/Lisbon" || v["overlap"] != "skip" || v["missed"] != "run_once" ||
		v["paused"] != false || req["agent"] != nil || req["metadata"] == nil {
		t.Fatalf("view %v", v)
	}
	// 2026-05-06 (a Wednesday) 07:08 UTC: 09:00 in Lisbon (WEST) is 08:00 UTC.
	if nft, _ := v["next_fire_times"].([]any); len(nft) != 5 || nft[0] != "2026-05-06T08:00:00Z" || nft[3] != "2026-05-11T08:00:00Z" {
		t.Fatalf("next fire times %v", v["next_fire_times"])
	}
	if st, v, _ = e.do(t, "GET", "/v1/schedules", "tok-acme-123", "", nil); st != 200 || len(v["schedules"].([]any)) != 1 || v["next_cursor"] != nil {
		t.Fatalf("list: %d %v", st, v)
	}
	if st, v, _ = e.do(t, "GET", "/v1/schedules/"+id, "tok-acme-123", "", nil); st != 200 || v["schedule_id"] != id {
		t.Fatalf("get: %d %v", st, v)
	}
	if st, v, _ = e.do(t, "PATCH", "/v1/schedules/"+id, "tok-acme-123", `{"paused":true}`, nil); st != 200 || v["paused"] != true || len(v["next_fire_times"].([]any)) != 0 {
		t.Fatalf("pause: %d %v", st, v)
	}
	if st, v, _ = e.do(t, "GET", "/v1/schedules/"+id+"/triggers", "tok-acme-123", "", nil); st != 200 || len(v["triggers"].([]any)) != 0 || v["next_cursor"] != nil {
		t.Fatalf("triggers: %d %v", st, v)
	}
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/v1/schedules/" + id, ""}, {"PATCH", "/v1/schedules/" + id, `{"paused":false}`},
		{"DELETE", "/v1/schedules/" + id, ""}, {"GET", "/v1/schedules/" + id + "/triggers", ""},
	} {
		if st, v, _ := e.do(t, r.method, r.path, "tok-globex-1", r.body, nil); st != 404 {
			t.Fatalf("another tenant's %s %s: %d %v", r.method, r.path, st, v)
		}
	}
	if st, v, _ = e.do(t, "GET", "/v1/schedules", "tok-globex-1", "", nil); st != 200 || len(v["schedules"].([]any)) != 0 {
		t.Fatalf("another tenant lists: %d %v", st, v)
	}
	if st, _, _ = e.do(t, "DELETE", "/v1/schedules/"+id, "tok-acme-123", "", nil); st != http.StatusNoContent {
		t.Fatalf("delete: %d", st)
	}
	if st, v, _ = e.do(t, "GET", "/v1/schedules/"+id, "tok-acme-123", "", nil); st != 404 {
		t.Fatalf("deleted: %d %v", st, v)
	}
	if st, v, _ = e.do(t, "GET", "/v1/schedules/not-a-schedule-id", "tok-acme-123", "", nil); st != 404 {
		t.Fatalf("a malformed id: %d %v", st, v)
	}
}

// TestScheduleRouteRefusals: scopes, bodies and queries the routes refuse.
func TestScheduleRouteRefusals(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		method, path, token, body string
		status                    int
		code, field               string
	}{
		{"POST", "/v1/schedules", "tok-readonly", scheduleBody, 403, "forbidden", ""},
		{"GET", "/v1/schedules", "tok-readonly", "", 403, "forbidden", ""},
		{"POST", "/v1/schedules", "tok-acme-123", `{"agent":"demo","cron":"0 9 * * *","request":{"messages":[{"role":"user","content":"x"}]},"colour":1}`, 400, "unknown_field", "colour"},
		{"POST", "/v1/schedules", "tok-acme-123", `{"agent":"demo","cron":"0 9 * * *","timezone":"Nowhere/Land","request":{"messages":[{"role":"user","content":"x"}]}}`, 400, "invalid_request", "timezone"},
		{"POST", "/v1/schedules", "tok-acme-123", ``, 400, "invalid_body", ""},
		{"GET", "/v1/schedules?limit=0", "tok-acme-123", "", 400, "invalid_query", ""},
		{"GET", "/v1/schedules?cursor=bogus", "tok-acme-123", "", 400, "invalid_cursor", ""},
	} {
		st, v, _ := e.do(t, c.method, c.path, c.token, c.body, nil)
		code, details := errOf(v)
		if st != c.status || code != c.code || (c.field != "" && details["field"] != c.field) {
			t.Fatalf("%s %s %s: %d %v, want %d %s %s", c.method, c.path, c.body, st, v, c.status, c.code, c.field)
		}
	}
	e.api.Schedules = nil
	if st, v, _ := e.do(t, "GET", "/v1/schedules", "tok-acme-123", "", nil); st != http.StatusNotImplemented {
		t.Fatalf("a deployment without schedules: %d %v", st, v)
	}
}
