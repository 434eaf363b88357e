package httpapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/app"
)

// newTracedEnv is newEnv recording spans in memory, with env as the
// process environment (vars).
func newTracedEnv(t *testing.T, vars map[string]string) (*env, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	clock := &core.FixedClock{T: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	a, err := app.Build(context.Background(), app.Config{Stores: app.Stores{Memory: true, Visibility: time.Minute}, Agents: app.Agents{JSON: agentsJSON},
		Providers: []string{"scripted"}, ExecuteTools: true, MaxBody: 64 << 10, Env: lookup},
		app.Deps{Clock: clock, IDs: &core.SequentialIDs{}, Log: discard, TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	_ = a.PutToken(context.Background(), app.Token{Token: "tok-acme-123", Tenant: "acme"})
	return &env{api: a.API, q: a.Steps, eng: a.Runner, clock: clock}, rec
}

const (
	callerTrace  = "0af7651916cd43dd8448eb211c80319c"
	callerSpan   = "b7ad6b7169203331"
	canarySecret = "sk-CANARY-7f3e"
	canaryParam  = "raw-param-CANARY-91"
)

// tracedRun drives one run over HTTP: a server tool, then a client tool
// (a pause, answered over HTTP), then the final reply: five worker steps
// (model, server tool, model, client tool (the pause), model).
func tracedRun(t *testing.T, e *env) {
	t.Helper()
	body := `{"agent":"demo","messages":[{"role":"user","content":"go"}],
	  "tools":[{"name":"client/get_calendar","description":"Calendar.","parameters":{"type":"object","properties":{"day":{"type":"string"}}}}],
	  "model":{"provider":"scripted","model":"m1","turns":[
	    {"tool_calls":[{"id":"c1","name":"ability/echo","parameters":{"query":"` + canaryParam + `","api_key":"` + canarySecret + `"}}],"usage":{"prompt_tokens":11,"completion_tokens":7}},
	    {"tool_calls":[{"id":"c2","name":"client/get_calendar","parameters":{"day":"` + canaryParam + `"}}],"usage":{"prompt_tokens":13,"completion_tokens":5}},
	    {"content":"done","usage":{"prompt_tokens":17,"completion_tokens":3}}]}}`
	st, v, _ := e.do(t, "POST", "/v1/runs", "tok-acme-123", body, map[string]string{"Traceparent": "00-" + callerTrace + "-" + callerSpan + "-01"})
	if st != 202 {
		t.Fatalf("start: %d %v", st, v)
	}
	runID := v["run_id"].(string)
	e.pump(t)
	_, v, _ = e.do(t, "GET", "/v1/runs/"+runID, "tok-acme-123", "", nil)
	reqs, _ := v["pending"].(map[string]any)["tool_requests"].([]any)
	if len(reqs) != 1 {
		t.Fatalf("not paused on the client tool: %v", v)
	}
	reqID := reqs[0].(map[string]any)["request_id"].(string)
	if st, v, _ := e.do(t, "POST", "/v1/runs/"+runID+"/tool-results", "tok-acme-123", `{"request_id":"`+reqID+`","success":true,"result":{"free":true}}`, nil); st != 202 {
		t.Fatalf("submit: %d %v", st, v)
	}
	e.pump(t)
	if _, v, _ = e.do(t, "GET", "/v1/runs/"+runID, "tok-acme-123", "", nil); v["status"] != "completed" {
		t.Fatalf("status %v", v["status"])
	}
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestOneTracePerRun(t *testing.T) {
	e, rec := newTracedEnv(t, nil)
	tracedRun(t, e)
	spans := rec.Ended()
	byID := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		if got := s.SpanContext().TraceID().String(); got != callerTrace {
			t.Errorf("span %q in trace %s, want the caller's %s", s.Name(), got, callerTrace)
		}
		byID[s.SpanContext().SpanID().String()] = s
	}
	var roots, steps, chats, tools []sdktrace.ReadOnlySpan
	for _, s := range spans {
		switch n := s.Name(); {
		case n == "invoke_agent demo":
			roots = append(roots, s)
		case strings.HasPrefix(n, "step "):
			steps = append(steps, s)
		case n == "chat m1":
			chats = append(chats, s)
		case n == "execute_tool ability/echo":
			tools = append(tools, s)
		default:
			t.Errorf("unexpected span %q", n)
		}
	}
	if len(roots) != 1 || len(steps) != 5 || len(chats) != 3 || len(tools) != 1 {
		t.Fatalf("spans: %d invoke_agent, %d step, %d chat, %d execute_tool", len(roots), len(steps), len(chats), len(tools))
	}
	root := roots[0]
	if root.Parent().SpanID().String() != callerSpan || !root.Parent().IsRemote() {
		t.Fatalf("root's parent %v, want the caller's span", root.Parent())
	}
	if a := attrs(root); a["gen_ai.agent.name"].AsString() != "demo" || a["gen_ai.operation.name"].AsString() != "invoke_agent" {
		t.Fatalf("root attributes %v", a)
	}
	for _, s := range steps {
		if s.Parent().SpanID() != root.SpanContext().SpanID() {
			t.Errorf("%s is not a child of the run's root", s.Name())
		}
	}
	for _, s := range append(append([]sdktrace.ReadOnlySpan(nil), chats...), tools...) {
		p, ok := byID[s.Parent().SpanID().String()]
		if !ok || !strings.HasPrefix(p.Name(), "step ") {
			t.Errorf("%s is not a child of a step span", s.Name())
		}
	}
	want := [][2]int64{{11, 7}, {13, 5}, {17, 3}}
	for i, s := range chats {
		a := attrs(s)
		if a["gen_ai.operation.name"].AsString() != "chat" || a["gen_ai.system"].AsString() != "scripted" || a["gen_ai.request.model"].AsString() != "m1" ||
			a["gen_ai.usage.input_tokens"].AsInt64() != want[i][0] || a["gen_ai.usage.output_tokens"].AsInt64() != want[i][1] {
			t.Errorf("chat %d attributes %v", i, a)
		}
		if _, latest := a["gen_ai.provider.name"]; latest {
			t.Errorf("chat %d uses the experimental conventions by default", i)
		}
	}
	if a := attrs(tools[0]); a["gen_ai.tool.name"].AsString() != "ability/echo" || a["gen_ai.tool.call.id"].AsString() != "c1" || a["gen_ai.operation.name"].AsString() != "execute_tool" {
		t.Errorf("tool attributes %v", a)
	}
	for _, s := range spans {
		for _, kv := range s.Attributes() {
			if v := kv.Value.Emit(); strings.Contains(v, "CANARY") {
				t.Errorf("span %q attribute %s holds tool content: %s", s.Name(), kv.Key, v)
			}
		}
	}
}

func TestTraceLatestConventionsAndContentOptIn(t *testing.T) {
	e, rec := newTracedEnv(t, map[string]string{"OTEL_SEMCONV_STABILITY_OPT_IN": "http,gen_ai_latest_experimental", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"})
	tracedRun(t, e)
	var args string
	for _, s := range rec.Ended() {
		a := attrs(s)
		if s.Name() == "chat m1" && (a["gen_ai.provider.name"].AsString() != "scripted" || a["gen_ai.system"].AsString() != "") {
			t.Errorf("chat attributes %v", a)
		}
		if s.Name() == "execute_tool ability/echo" {
			args = a["gen_ai.tool.call.arguments"].AsString()
		}
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.Emit(), canarySecret) {
				t.Errorf("span %q attribute %s holds the secret", s.Name(), kv.Key)
			}
		}
	}
	if !strings.Contains(args, canaryParam) || !strings.Contains(args, "api_key") {
		t.Fatalf("tool arguments with content capture on: %q", args)
	}
}

// TestTraceOfAnUnknownModel: a model spec without a model id (the
// scripted provider's default) makes spans named "chat" and
// "invoke_agent demo", with no empty gen_ai.request.model or
// gen_ai.response.model attribute.
func TestTraceOfAnUnknownModel(t *testing.T) {
	e, rec := newTracedEnv(t, nil)
	st, v, _ := e.do(t, "POST", "/v1/runs", "tok-acme-123", `{"agent":"demo","messages":[{"role":"user","content":"go"}],"model":{"provider":"scripted","turns":[{"content":"done"}]}}`, nil)
	if st != 202 {
		t.Fatalf("start: %d %v", st, v)
	}
	e.pump(t)
	chats := 0
	for _, s := range rec.Ended() {
		if strings.HasPrefix(s.Name(), "chat") {
			chats++
			if s.Name() != "chat" {
				t.Errorf("span name %q, want chat", s.Name())
			}
		}
		a := attrs(s)
		for _, k := range []attribute.Key{"gen_ai.request.model", "gen_ai.response.model"} {
			if v, ok := a[k]; ok {
				t.Errorf("span %q has %s = %q for an unknown model", s.Name(), k, v.AsString())
			}
		}
	}
	if chats != 1 {
		t.Fatalf("%d chat spans", chats)
	}
}
