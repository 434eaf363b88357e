package events_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/httpapi"
	"github.com/baton-agents/baton/internal/worker"
)

func schema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	s, err := c.Compile(filepath.Join("schemas", name+".schema.json"))
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	return s
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func canonical(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// roundTrip reads the sample at path into a T and fails the test unless
// the T marshals back to the same JSON.
func roundTrip[T any](t *testing.T, path string) T {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	back, _ := json.Marshal(v)
	if canonical(t, back) != canonical(t, raw) {
		t.Fatalf("sample %s does not round-trip through %T:\n%s\n%s", path, v, canonical(t, raw), canonical(t, back))
	}
	return v
}

var bodySchema = map[string]string{
	"start-run.json": "start-run", "submit-result.json": "tool-result", "approve.json": "approval",
	"cancel.json": "cancel", "steer.json": "steer", "interrupt.json": "interrupt",
	"publish-agent-version.json": "agents-file", "fork-run.json": "fork", "start-eval.json": "eval-run",
}

// managerToken holds agents:manage, which the sample token (the default
// scopes) lacks.
const managerToken = "sample-manager-0000001"

// manageSamples are the samples of the agents:manage routes and what
// each answers with managerToken on a fresh store: the sample version is
// not published, the sample alias routes to unpublished versions, and
// default points at the bundled file's version.
var manageSamples = map[string]int{
	"list-agent-versions.json": 200, "publish-agent-version.json": 201, "get-agent-version.json": 404,
	"list-agent-aliases.json": 200, "get-agent-alias.json": 200, "put-agent-alias.json": 400, "list-agent-audit.json": 200,
}

func newAPI(t *testing.T) (*httpapi.API, *worker.Worker) {
	t.Helper()
	b, err := os.ReadFile("../cmd/baton/agents.demo.json")
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Build(context.Background(), app.Config{Stores: app.Stores{Memory: true, Visibility: time.Minute}, Agents: app.Agents{Bytes: b},
		Providers: []string{"scripted"}, ExecuteTools: true},
		app.Deps{Clock: &core.FixedClock{T: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.PutToken(context.Background(), app.Token{Token: "sample-token-0000001", Tenant: "sample"}); err != nil {
		t.Fatal(err)
	}
	if err := a.PutToken(context.Background(), app.Token{Token: managerToken, Tenant: "sample", Label: "manager", Scopes: []string{httpapi.ScopeAgentsManage}}); err != nil {
		t.Fatal(err)
	}
	return a.API, a.Worker
}

// TestAPISamples: every sample round-trips through the Lambda event type,
// its body satisfies its schema, and the handler answers it as expected,
// in an exchange the OpenAPI document describes: the sample token lacks
// agents:manage, so the agent-version samples are forbidden; with a
// token that holds it they reach their handlers.
func TestAPISamples(t *testing.T) {
	api, _ := newAPI(t)
	// The AG-UI sample's stream, with no worker here, ends at the wait.
	api.Config.MaxWait = 100 * time.Millisecond
	errSchema := schema(t, "error")
	files, _ := filepath.Glob("api/*.json")
	if len(files) != len(httpapi.Routes()) {
		t.Fatalf("want a sample per route (%d), have %d", len(httpapi.Routes()), len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			req := roundTrip[events.APIGatewayProxyRequest](t, f)
			if name, ok := bodySchema[filepath.Base(f)]; ok {
				if err := schema(t, name).Validate(decode(t, []byte(req.Body))); err != nil {
					t.Fatalf("body does not satisfy %s: %v", name, err)
				}
			}
			resp, _ := api.Handle(context.Background(), req)
			// The sample run does not exist in a fresh store; list-runs
			// and interrupt carry a custom domain's base path, which the
			// handler routes through.
			want, code := map[string]int{"start-run.json": 202, "list-runs.json": 200, "start-eval.json": 202, "list-evals.json": 200, "get-openapi.json": 200, "agui.json": 200, "a2a-card.json": 200, "a2a.json": 200, "list-memories.json": 200, "erase-memories.json": 200, "create-schedule.json": 201, "list-schedules.json": 200}[filepath.Base(f)], "not_found"
			if _, ok := manageSamples[filepath.Base(f)]; ok {
				want, code = 403, "forbidden"
			} else if want == 0 {
				want = 404
			}
			if resp.StatusCode != want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, want, resp.Body)
			}
			if resp.StatusCode >= 400 {
				if err := errSchema.Validate(decode(t, []byte(resp.Body))); err != nil {
					t.Fatalf("error body does not satisfy the error schema: %v", err)
				}
				if !strings.Contains(resp.Body, `"code":"`+code+`"`) {
					t.Fatalf("the sample was not routed: %s", resp.Body)
				}
			}
			// Each exchange is one the document describes (but for the
			// samples under a custom domain's base path).
			doc := checker(t)
			doc.Exchange(exchange(req, resp))
			want, ok := manageSamples[filepath.Base(f)]
			if !ok {
				if p := doc.Problems(); len(p) > 0 && !strings.HasPrefix(req.Path, "/agents/") {
					t.Fatalf("the document does not describe the exchange: %v", p)
				}
				return
			}
			req.Headers["Authorization"] = "Bearer " + managerToken
			req.MultiValueHeaders["Authorization"] = []string{"Bearer " + managerToken}
			resp, _ = api.Handle(context.Background(), req)
			if resp.StatusCode != want {
				t.Fatalf("with agents:manage: status %d, want %d: %s", resp.StatusCode, want, resp.Body)
			}
			doc.Exchange(exchange(req, resp))
			if p := doc.Problems(); len(p) > 0 {
				t.Fatalf("the document does not describe the exchange: %v", p)
			}
		})
	}
}

// exchange is a Lambda proxy request and its answer as the HTTP exchange
// the OpenAPI checker reads.
func exchange(req events.APIGatewayProxyRequest, resp events.APIGatewayProxyResponse) (*http.Request, []byte, *http.Response, []byte) {
	q := url.Values{}
	for k, v := range req.QueryStringParameters {
		q.Set(k, v)
	}
	r, _ := http.NewRequest(req.HTTPMethod, "http://127.0.0.1:8080"+req.Path+"?"+q.Encode(), strings.NewReader(req.Body))
	for k, v := range req.Headers {
		r.Header.Set(k, v)
	}
	h := http.Header{}
	for k, v := range resp.Headers {
		h.Set(k, v)
	}
	return r, []byte(req.Body), &http.Response{StatusCode: resp.StatusCode, Header: h, Request: r}, []byte(resp.Body)
}

// TestBasePathRouting: behind a custom domain whose base-path mapping
// puts the API under /agents, the list-runs and interrupt samples (path
// /agents/v1/…, resource and path parameters without the base path) reach
// their routes: the run the start-run sample made is listed, and
// interrupting it ends it interrupted.
func TestBasePathRouting(t *testing.T) {
	api, _ := newAPI(t)
	ctx := context.Background()
	start := roundTrip[events.APIGatewayProxyRequest](t, "api/start-run.json")
	resp, _ := api.Handle(ctx, start)
	var run struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(resp.Body), &run); err != nil || resp.StatusCode != 202 {
		t.Fatalf("start: %d %s", resp.StatusCode, resp.Body)
	}
	list := roundTrip[events.APIGatewayProxyRequest](t, "api/list-runs.json")
	if !strings.HasPrefix(list.Path, "/agents/v1/") {
		t.Fatalf("the list sample's path %s carries no base path", list.Path)
	}
	resp, _ = api.Handle(ctx, list)
	if resp.StatusCode != 200 || !strings.Contains(resp.Body, `"run_id":"`+run.RunID+`"`) {
		t.Fatalf("list: %d %s", resp.StatusCode, resp.Body)
	}
	in := roundTrip[events.APIGatewayProxyRequest](t, "api/interrupt.json")
	sampleID := in.PathParameters["run_id"]
	in.Path = strings.Replace(in.Path, sampleID, run.RunID, 1)
	in.RequestContext.Path = strings.Replace(in.RequestContext.Path, sampleID, run.RunID, 1)
	in.PathParameters["run_id"] = run.RunID
	resp, _ = api.Handle(ctx, in)
	if resp.StatusCode != 202 || !strings.Contains(resp.Body, `"status":"interrupted"`) || !strings.Contains(resp.Body, `"action":"handoff"`) {
		t.Fatalf("interrupt: %d %s", resp.StatusCode, resp.Body)
	}
}

// TestSchemasAgreeWithHandler: bodies the schema rejects, the handler
// rejects too.
func TestSchemasAgreeWithHandler(t *testing.T) {
	api, _ := newAPI(t)
	raw, _ := os.ReadFile("api/start-run.json")
	var base events.APIGatewayProxyRequest
	_ = json.Unmarshal(raw, &base)
	bad := []string{
		`{"agent":"demo","messages":[{"role":"user","content":"x"}],"colour":"red"}`,
		`{"agent":"demo","messages":[]}`,
		`{"messages":[{"role":"user","content":"x"}]}`,
		`{"agent":"demo","messages":[{"role":"user","content":"x"}],"tools":[{"name":"ability/x","description":"d"}]}`,
		`{"agent":"demo","messages":[{"role":"user","content":"x"}],"budgets":{"dollars":5}}`,
		`{"agent":"demo","messages":[{"role":"user","content":"x"}],"max_turns":0}`,
		`{"agent":"demo","messages":[{"role":"user","content":"x"}],"alias":"default","agent_version":"av_0123456789abcdef"}`,
		`{"agent":"demo","messages":[{"role":"user","content":"x"}],"alias":"Prod!"}`,
		`{"agent":"demo","messages":[{"role":"user","content":"x"}],"agent_version":"latest"}`,
	}
	s := schema(t, "start-run")
	for _, body := range bad {
		if err := s.Validate(decode(t, []byte(body))); err == nil {
			t.Errorf("schema accepts %s", body)
		}
		req := base
		req.Headers = map[string]string{"Authorization": "Bearer sample-token-0000001"}
		req.MultiValueHeaders = nil
		req.Body = body
		resp, _ := api.Handle(context.Background(), req)
		if resp.StatusCode != 400 {
			t.Errorf("handler answers %d to %s", resp.StatusCode, body)
		}
	}
}

func TestSQSSample(t *testing.T) {
	_, w := newAPI(t)
	ev := roundTrip[events.SQSEvent](t, "sqs/step-batch.json")
	step := schema(t, "step")
	for _, r := range ev.Records {
		if err := step.Validate(decode(t, []byte(r.Body))); err != nil {
			t.Fatalf("step body: %v", err)
		}
		if !strings.Contains(r.Attributes["MessageDeduplicationId"], ":") {
			t.Fatal("dedup id is run:seq")
		}
	}
	resp, _ := w.Handle(context.Background(), ev)
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("a step for an unknown run must be acknowledged, got %v", resp.BatchItemFailures)
	}
	for _, bad := range []string{`{"kind":"model_turn","v":2,"run_id":"r","seq":1}`, `{"kind":"nap","v":1,"run_id":"r","seq":1}`, `{"kind":"model_turn","v":1,"run_id":"r","seq":1,"payload":"x"}`} {
		if err := step.Validate(decode(t, []byte(bad))); err == nil {
			t.Errorf("step schema accepts %s", bad)
		}
	}
}

// TestStreamEventsSatisfySchema: every event of a run's stream satisfies
// the stream-event schema, carries its seq as id and its type as event
// name, and the stream ends with the run view.
func TestStreamEventsSatisfySchema(t *testing.T) {
	a := sampleApp(t)
	start := roundTrip[events.APIGatewayProxyRequest](t, "api/start-run.json")
	resp, _ := a.API.Handle(context.Background(), start)
	var view map[string]any
	if err := json.Unmarshal([]byte(resp.Body), &view); err != nil || resp.StatusCode != 202 {
		t.Fatalf("start: %d %s", resp.StatusCode, resp.Body)
	}
	for i := 0; i < 10; i++ {
		ds, _ := a.Steps.Receive(context.Background(), 10, 0)
		if len(ds) == 0 {
			break
		}
		var ev events.SQSEvent
		for _, d := range ds {
			ev.Records = append(ev.Records, events.SQSMessage{MessageId: d.MessageID, ReceiptHandle: d.ReceiptHandle, Body: string(d.Body), Attributes: map[string]string{"ApproximateReceiveCount": "1"}})
			_ = a.Steps.Delete(context.Background(), d.ReceiptHandle)
		}
		_, _ = a.Worker.Handle(context.Background(), ev)
	}
	req := roundTrip[events.APIGatewayProxyRequest](t, "api/get-stream.json")
	req.Path = strings.Replace(req.Path, "r-00000000000000000000000001", view["run_id"].(string), 1)
	req.PathParameters["proxy"] = strings.TrimPrefix(req.Path, "/v1/")
	req.Headers["Last-Event-ID"] = "0"
	head, body := a.API.Stream(context.Background(), req)
	if body == nil || head.Headers["Content-Type"] != "text/event-stream" {
		t.Fatalf("stream: %d %s", head.StatusCode, head.Body)
	}
	var out strings.Builder
	if err := body(context.Background(), &out, func() {}); err != nil {
		t.Fatal(err)
	}
	s := schema(t, "stream-event")
	blocks := strings.Split(strings.TrimSuffix(out.String(), "\n\n"), "\n\n")
	for i, block := range blocks {
		fields := map[string]string{}
		for _, line := range strings.Split(block, "\n") {
			k, v, _ := strings.Cut(line, ": ")
			fields[k] = v
		}
		if i == len(blocks)-1 {
			if fields["event"] != "end" || !strings.Contains(fields["data"], `"status":"runtime_tool_pending"`) {
				t.Fatalf("last stream event %q", block)
			}
			continue
		}
		if err := s.Validate(decode(t, []byte(fields["data"]))); err != nil {
			t.Fatalf("stream event %q: %v", block, err)
		}
		var ev core.Event
		_ = json.Unmarshal([]byte(fields["data"]), &ev)
		if fields["id"] != fmt.Sprint(ev.Seq) || fields["event"] != ev.Type {
			t.Fatalf("stream event %q: id/event do not match the data", block)
		}
	}
	if len(blocks) < 3 {
		t.Fatalf("%d stream events", len(blocks))
	}
	for _, bad := range []string{`{"seq":0,"type":"run_started","turn":0,"at":"2026-01-01T00:00:00Z"}`,
		`{"seq":1,"type":"run_started","turn":0}`, `{"seq":1,"type":"Run Started","turn":0,"at":"2026-01-01T00:00:00Z"}`,
		`{"seq":1,"type":"run_started","turn":0,"at":"2026-01-01T00:00:00Z","data":{"agent":"demo","agent_version":"latest","max_turns":8,"parallel_tool_calls":false,"tools":[]}}`} {
		if err := s.Validate(decode(t, []byte(bad))); err == nil {
			t.Errorf("stream-event schema accepts %s", bad)
		}
	}
	// The sample itself names a run the fresh store lacks: 404 on both paths.
	sample := roundTrip[events.APIGatewayProxyRequest](t, "api/get-stream.json")
	if r, b := a.API.Stream(context.Background(), sample); b != nil || r.StatusCode != 404 {
		t.Fatalf("stream of the sample run: %d", r.StatusCode)
	}
}

// TestGoldenEventsSatisfySchema: every lifecycle event of core's golden
// envelopes satisfies the stream-event schema, and between them they use
// every stored §13.1 event and the agents-api names kept beside them.
func TestGoldenEventsSatisfySchema(t *testing.T) {
	s := schema(t, "stream-event")
	files, _ := filepath.Glob("../core/testdata/golden/*.json")
	if len(files) == 0 {
		t.Fatal("no golden envelopes")
	}
	seen := map[string]bool{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var env struct {
			Events []json.RawMessage `json:"events"`
		}
		if err := json.Unmarshal(raw, &env); err != nil {
			t.Fatal(err)
		}
		for _, ev := range env.Events {
			if err := s.Validate(decode(t, ev)); err != nil {
				t.Fatalf("%s: event %s: %v", filepath.Base(f), ev, err)
			}
			var e core.Event
			_ = json.Unmarshal(ev, &e)
			seen[e.Type] = true
			if e.Type == core.EventMessagesUpdated {
				seen[e.Type+"/"+fmt.Sprint(e.Fields()["reason"])] = true
			}
		}
	}
	for _, name := range []string{"tool_call_start", "tool_result", "status", "error", "done", "cancelled", "tool_call", "completed",
		"messages_updated/model_reply", "messages_updated/tool_result", "messages_updated/steering", "messages_updated/completion_policy",
		"messages_updated/compaction", "messages_updated/context_trimmed"} {
		if !seen[name] {
			t.Errorf("no golden envelope has a %s event", name)
		}
	}
	at := `"seq":1,"turn":1,"at":"2026-01-01T00:00:00Z"`
	for _, bad := range []string{
		`{` + at + `,"type":"tool_call_start","data":{"name":"a","arguments":{"q":1},"tool_call_id":"c"}}`,
		`{` + at + `,"type":"tool_call_start"}`,
		`{` + at + `,"type":"tool_result","data":{"tool_name":"a","tool_call_id":"c","success":true}}`,
		`{` + at + `,"type":"messages_updated","data":{"reason":"tool_result","messages":[]}}`,
		`{` + at + `,"type":"messages_updated","data":{"reason":"context_trimmed","from_seq":1,"to_seq":2}}`,
		`{` + at + `,"type":"done","data":{"messages":[]}}`,
		`{` + at + `,"type":"error","data":{"error":"x"}}`,
	} {
		if err := s.Validate(decode(t, []byte(bad))); err == nil {
			t.Errorf("stream-event schema accepts %s", bad)
		}
	}
}
