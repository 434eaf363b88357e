package eventbridge

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/aws/smithy-go"

	"github.com/baton-agents/baton/core"
)

const (
	group = "baton-prod-schedules"
	role  = "arn:aws:iam::123456789012:role/baton-scheduler"
	queue = "arn:aws:sqs:eu-west-1:123456789012:baton-intake"
)

type request struct {
	Method, Path, Query string
	Body                map[string]any
}

// reply is a canned answer: status, the error type (X-Amzn-Errortype)
// when it is an error, and the body.
type reply struct {
	status  int
	errType string
	body    string
}

// fakeScheduler stands in for the EventBridge Scheduler endpoint on
// 127.0.0.1: it records each request and answers with the next reply.
func fakeScheduler(t *testing.T, replies ...reply) (*Scheduler, func() []request) {
	t.Helper()
	var (
		mu   sync.Mutex
		reqs []request
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		req := request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query().Get("groupName")}
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &req.Body); err != nil {
				t.Errorf("request body %s: %v", raw, err)
			}
		}
		mu.Lock()
		reqs = append(reqs, req)
		n := len(reqs)
		mu.Unlock()
		if n > len(replies) {
			t.Errorf("unexpected request %d: %s %s", n, r.Method, r.URL)
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		rep := replies[n-1]
		w.Header().Set("Content-Type", "application/json")
		if rep.errType != "" {
			w.Header().Set("X-Amzn-Errortype", rep.errType)
		}
		w.WriteHeader(rep.status)
		_, _ = io.WriteString(w, rep.body)
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	cfg := aws.Config{
		Region:       "eu-west-1",
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		BaseEndpoint: aws.String(srv.URL),
		Retryer:      func() aws.Retryer { return aws.NopRetryer{} },
	}
	s := New(cfg, group, role, queue)
	s.now = func() time.Time { return now }
	return s, func() []request {
		mu.Lock()
		defer mu.Unlock()
		return append([]request(nil), reqs...)
	}
}

var (
	now     = time.Date(2026, 11, 27, 23, 30, 12, 0, time.UTC)
	created = reply{status: 200, body: `{"ScheduleArn":"arn:aws:scheduler:eu-west-1:123456789012:schedule/baton-prod-schedules/sch-1"}`}
	ok      = reply{status: 200, body: `{}`}
)

func schedule() core.Schedule {
	return core.Schedule{ID: "sch-1", Tenant: "acme", Agent: "demo", Cron: "0 9 * * MON-FRI", Timezone: "Europe/Lisbon", CreatedAt: now.Add(-time.Hour)}
}

func ptr(t time.Time) *time.Time { return &t }

// want is the definition Sync sends for schedule() with spec.
func want(expr, tz, state string, start, end *time.Time) map[string]any {
	m := map[string]any{
		"GroupName":                  group,
		"Description":                "Baton schedule sch-1 of tenant acme",
		"ScheduleExpression":         expr,
		"ScheduleExpressionTimezone": tz,
		"State":                      state,
		"FlexibleTimeWindow":         map[string]any{"Mode": "OFF"},
		"ActionAfterCompletion":      "NONE",
		"Target": map[string]any{
			"Arn":         queue,
			"RoleArn":     role,
			"Input":       `{"schedule_fire":{"tenant":"acme","schedule_id":"sch-1","fire_time":"<aws.scheduler.scheduled-time>"}}`,
			"RetryPolicy": map[string]any{"MaximumEventAgeInSeconds": float64(86400)},
		},
	}
	if start != nil {
		m["StartDate"] = float64(start.Unix())
	}
	if end != nil {
		m["EndDate"] = float64(end.Unix())
	}
	return m
}

// definition is a request's body without its client token (the SDK's
// idempotency token, random).
func definition(t *testing.T, r request) map[string]any {
	t.Helper()
	body := map[string]any{}
	for k, v := range r.Body {
		body[k] = v
	}
	if tok, _ := body["ClientToken"].(string); tok == "" {
		t.Errorf("%s %s: no ClientToken", r.Method, r.Path)
	}
	delete(body, "ClientToken")
	return body
}

func TestSyncCreatesTheSchedule(t *testing.T) {
	s, reqs := fakeScheduler(t, created)
	start, end := now.Add(48*time.Hour), now.Add(30*24*time.Hour)
	spec := core.ScheduleSpec{Expression: "cron(0 9 ? * MON-FRI *)", Timezone: "Europe/Lisbon", Start: &start, End: &end, Enabled: true}
	if err := s.Sync(context.Background(), schedule(), spec); err != nil {
		t.Fatal(err)
	}
	got := reqs()
	if len(got) != 1 || got[0].Method != http.MethodPost || got[0].Path != "/schedules/sch-1" {
		t.Fatalf("requests %+v, want one POST /schedules/sch-1", got)
	}
	if body, w := definition(t, got[0]), want("cron(0 9 ? * MON-FRI *)", "Europe/Lisbon", "ENABLED", &start, &end); !reflect.DeepEqual(body, w) {
		t.Errorf("CreateSchedule body\n got %v\nwant %v", body, w)
	}
	// The intake reads the input as a ScheduleFire once EventBridge
	// Scheduler has put the fire time in place of the placeholder.
	input := got[0].Body["Target"].(map[string]any)["Input"].(string)
	var msg struct {
		Fire core.ScheduleFire `json:"schedule_fire"`
	}
	if err := json.Unmarshal([]byte(strings.Replace(input, FireTimePlaceholder, "2026-12-01T09:00:00Z", 1)), &msg); err != nil {
		t.Fatal(err)
	}
	if w := (core.ScheduleFire{Tenant: "acme", ScheduleID: "sch-1", FireTime: "2026-12-01T09:00:00Z"}); msg.Fire != w {
		t.Errorf("fire message %+v, want %+v", msg.Fire, w)
	}
}

func TestSyncUpdatesAnExistingSchedule(t *testing.T) {
	s, reqs := fakeScheduler(t,
		reply{status: 409, errType: "ConflictException", body: `{"Message":"Schedule sch-1 already exists."}`},
		reply{status: 200, body: `{"ScheduleArn":"arn:aws:scheduler:eu-west-1:123456789012:schedule/baton-prod-schedules/sch-1"}`})
	spec := core.ScheduleSpec{Expression: "at(2026-12-24T18:00:00)", Timezone: "America/New_York", Enabled: true}
	if err := s.Sync(context.Background(), schedule(), spec); err != nil {
		t.Fatal(err)
	}
	got := reqs()
	if len(got) != 2 || got[1].Method != http.MethodPut || got[1].Path != "/schedules/sch-1" {
		t.Fatalf("requests %+v, want POST then PUT /schedules/sch-1", got)
	}
	w := want("at(2026-12-24T18:00:00)", "America/New_York", "ENABLED", nil, nil)
	for i, r := range got {
		if body := definition(t, r); !reflect.DeepEqual(body, w) {
			t.Errorf("request %d (%s) body\n got %v\nwant %v", i, r.Method, body, w)
		}
	}
}

func TestSyncDefinitions(t *testing.T) {
	past := now.Add(-10 * time.Minute)
	for _, c := range []struct {
		name  string
		s     func(*core.Schedule)
		spec  core.ScheduleSpec
		state string
		start *time.Time
		end   *time.Time
		tz    string
	}{
		{name: "paused", spec: core.ScheduleSpec{Expression: "cron(0 9 * * ? *)", Timezone: "UTC"}, state: "DISABLED", tz: "UTC"},
		{name: "no time zone is UTC", spec: core.ScheduleSpec{Expression: "cron(0 9 * * ? *)", Enabled: true}, state: "ENABLED", tz: "UTC"},
		{name: "a cron start in the past is left out", spec: core.ScheduleSpec{Expression: "cron(0 9 * * ? *)", Timezone: "UTC", Start: &past, Enabled: true}, state: "ENABLED", tz: "UTC"},
		{name: "a start a minute ago is kept", spec: core.ScheduleSpec{Expression: "cron(0 9 * * ? *)", Timezone: "UTC", Start: ptr(now.Add(-time.Minute)), Enabled: true},
			state: "ENABLED", tz: "UTC", start: ptr(now.Add(-time.Minute))},
		{name: "a rate is anchored at its start, moved by whole periods",
			spec:  core.ScheduleSpec{Expression: "rate(15 minutes)", Timezone: "UTC", Start: ptr(time.Date(2026, 11, 1, 8, 5, 0, 0, time.UTC)), Enabled: true},
			state: "ENABLED", tz: "UTC", start: ptr(time.Date(2026, 11, 27, 23, 35, 0, 0, time.UTC))},
		{name: "a rate without a start is anchored at the schedule's creation minute",
			s:     func(s *core.Schedule) { s.CreatedAt = time.Date(2026, 11, 27, 20, 0, 41, 0, time.UTC) },
			spec:  core.ScheduleSpec{Expression: "rate(2 hours)", Timezone: "Europe/Lisbon", Enabled: true},
			state: "ENABLED", tz: "Europe/Lisbon", start: ptr(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC))},
		{name: "a rate created just now starts at its creation minute",
			s:     func(s *core.Schedule) { s.CreatedAt = now },
			spec:  core.ScheduleSpec{Expression: "rate(1 day)", Timezone: "UTC", Enabled: true},
			state: "ENABLED", tz: "UTC", start: ptr(now.Truncate(time.Minute))},
		{name: "a rate exactly whole periods behind starts now",
			spec:  core.ScheduleSpec{Expression: "rate(15 minutes)", Timezone: "UTC", Start: ptr(now.Add(-45 * time.Minute)), Enabled: true},
			state: "ENABLED", tz: "UTC", start: ptr(now)},
		{name: "a rate of days is anchored by whole days",
			spec:  core.ScheduleSpec{Expression: "rate(2 days)", Timezone: "UTC", Start: ptr(now.Add(-3 * 24 * time.Hour)), Enabled: true},
			state: "ENABLED", tz: "UTC", start: ptr(now.Add(24 * time.Hour))},
		{name: "an end that passed disables it", spec: core.ScheduleSpec{Expression: "cron(0 9 * * ? *)", Timezone: "UTC", End: &past, Enabled: true}, state: "DISABLED", tz: "UTC"},
		{name: "a rate whose next period is past its end is disabled",
			spec:  core.ScheduleSpec{Expression: "rate(1 hour)", Timezone: "UTC", Start: ptr(now.Add(-90 * time.Minute)), End: ptr(now.Add(10 * time.Minute)), Enabled: true},
			state: "DISABLED", tz: "UTC", start: ptr(now.Add(30 * time.Minute))},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, reqs := fakeScheduler(t, created)
			sch := schedule()
			if c.s != nil {
				c.s(&sch)
			}
			if err := s.Sync(context.Background(), sch, c.spec); err != nil {
				t.Fatal(err)
			}
			got := reqs()
			if len(got) != 1 {
				t.Fatalf("%d requests", len(got))
			}
			if body, w := definition(t, got[0]), want(c.spec.Expression, c.tz, c.state, c.start, c.end); !reflect.DeepEqual(body, w) {
				t.Errorf("body\n got %v\nwant %v", body, w)
			}
		})
	}
}

func TestFireInputKeepsThePlaceholderAndEscapesNothingElse(t *testing.T) {
	in, err := fireInput(core.Schedule{ID: "sch-2", Tenant: `a<b>&"c"`})
	if err != nil {
		t.Fatal(err)
	}
	if w := `{"schedule_fire":{"tenant":"a<b>&\"c\"","schedule_id":"sch-2","fire_time":"<aws.scheduler.scheduled-time>"}}`; in != w {
		t.Errorf("input %s, want %s", in, w)
	}
}

func TestRemove(t *testing.T) {
	for _, c := range []struct {
		name string
		rep  reply
	}{
		{"deleted", ok},
		{"already gone", reply{status: 404, errType: "ResourceNotFoundException", body: `{"Message":"Schedule sch-1 does not exist."}`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, reqs := fakeScheduler(t, c.rep)
			if err := s.Remove(context.Background(), schedule()); err != nil {
				t.Fatal(err)
			}
			got := reqs()
			if len(got) != 1 || got[0].Method != http.MethodDelete || got[0].Path != "/schedules/sch-1" || got[0].Query != group {
				t.Errorf("requests %+v, want DELETE /schedules/sch-1?groupName=%s", got, group)
			}
		})
	}
}

func TestErrorsWrapTheAWSError(t *testing.T) {
	denied := reply{status: 403, errType: "AccessDeniedException", body: `{"Message":"not authorized to perform scheduler:DeleteSchedule"}`}
	invalid := reply{status: 400, errType: "ValidationException", body: `{"Message":"Invalid Schedule Expression cron(61 * * * ? *)."}`}
	quota := reply{status: 402, errType: "ServiceQuotaExceededException", body: `{"Message":"too many schedules"}`}
	conflict := reply{status: 409, errType: "ConflictException", body: `{"Message":"exists"}`}
	spec := core.ScheduleSpec{Expression: "cron(61 * * * ? *)", Timezone: "UTC", Enabled: true}
	for _, c := range []struct {
		name    string
		replies []reply
		call    func(*Scheduler) error
		msg     string
		target  any
	}{
		{"create refused", []reply{invalid}, func(s *Scheduler) error { return s.Sync(context.Background(), schedule(), spec) },
			"eventbridge scheduler: create schedule sch-1: ", new(*types.ValidationException)},
		{"update refused", []reply{conflict, invalid}, func(s *Scheduler) error { return s.Sync(context.Background(), schedule(), spec) },
			"eventbridge scheduler: update schedule sch-1: ", new(*types.ValidationException)},
		{"delete refused", []reply{denied}, func(s *Scheduler) error { return s.Remove(context.Background(), schedule()) },
			"eventbridge scheduler: delete schedule sch-1: ", new(*smithy.GenericAPIError)},
		{"over the quota", []reply{quota}, func(s *Scheduler) error { return s.Sync(context.Background(), schedule(), spec) },
			"eventbridge scheduler: create schedule sch-1: ", new(*types.ServiceQuotaExceededException)},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, reqs := fakeScheduler(t, c.replies...)
			err := c.call(s)
			if err == nil || !strings.HasPrefix(err.Error(), c.msg) || !errors.As(err, c.target) {
				t.Errorf("error %v, want one starting %q wrapping %T", err, c.msg, c.target)
			}
			if n := len(reqs()); n != len(c.replies) {
				t.Errorf("%d requests, want %d", n, len(c.replies))
			}
		})
	}
}

func TestABadRateIsRefusedBeforeAnyRequest(t *testing.T) {
	s, reqs := fakeScheduler(t)
	for _, expr := range []string{"rate(5 fortnights)", "rate(0 minutes)", "rate(-1 hours)", "rate(5 days"} {
		err := s.Sync(context.Background(), schedule(), core.ScheduleSpec{Expression: expr, Enabled: true})
		if err == nil || err.Error() != `eventbridge scheduler: schedule sch-1: expression "`+expr+`" is not rate(N minutes|hours|days)` {
			t.Errorf("%s: error %v", expr, err)
		}
	}
	if n := len(reqs()); n != 0 {
		t.Errorf("%d requests", n)
	}
}
