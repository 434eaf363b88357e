package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/executors"
	"github.com/baton-agents/baton/internal/guardrails"
	"github.com/baton-agents/baton/internal/toolspec"
	"github.com/baton-agents/baton/toolsig"
)

const testSecret = "hook-secret-0123456789abcdef"

// hookServer is an http hook on 127.0.0.1 that verifies every request's
// signature with toolsig, records it, and answers with answer.
type hookServer struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []recorded
	answer func(w http.ResponseWriter, r *http.Request, body map[string]any)
}

type recorded struct {
	header http.Header
	body   map[string]any
	verify error
}

func newHookServer(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, body map[string]any)) *hookServer {
	t.Helper()
	s := &hookServer{answer: answer}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		err := toolsig.Verify([]byte(testSecret), r.Header.Get(toolsig.HeaderTimestamp), r.Header.Get(toolsig.HeaderSignature), b, time.Now())
		var body map[string]any
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.UseNumber()
		_ = dec.Decode(&body)
		s.mu.Lock()
		s.reqs = append(s.reqs, recorded{header: r.Header.Clone(), body: body, verify: err})
		s.mu.Unlock()
		s.answer(w, r, body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *hookServer) requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.reqs...)
}

// fakeLambda is a Lambda client: fn answers each invocation.
type fakeLambda struct {
	mu     sync.Mutex
	events []map[string]any
	names  []string
	fn     func(event map[string]any) (functionError string, payload []byte, err error)
}

func (f *fakeLambda) Invoke(_ context.Context, function string, payload []byte) (string, []byte, error) {
	var ev map[string]any
	dec := json.NewDecoder(strings.NewReader(string(payload)))
	dec.UseNumber()
	if err := dec.Decode(&ev); err != nil {
		return "", nil, err
	}
	f.mu.Lock()
	f.events = append(f.events, ev)
	f.names = append(f.names, function)
	f.mu.Unlock()
	return f.fn(ev)
}

func testRemote(l executors.LambdaInvoker) *executors.Remote {
	return executors.NewRemote(executors.Options{Lambda: l, Getenv: func(k string) string {
		if k == "HOOK_SECRET" {
			return testSecret
		}
		return ""
	}})
}

func httpHook(t *testing.T, name, url, timeout string) *Hook {
	t.Helper()
	h, err := New(context.Background(), testRemote(nil), name, toolspec.Executor{Type: "http", URL: url, SecretEnv: "HOOK_SECRET", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func writeJSON(w http.ResponseWriter, s string) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, s)
}

var testMC = core.MediationContext{
	RunID: "r-1", Turn: 2, ToolName: "crm/update", ToolCallID: "call_7",
	Parameters:    map[string]any{"id": "42", "email": "a@example.com"},
	Declaration:   core.ToolDeclaration{Name: "crm/update", Source: "http"},
	Principal:     &core.Principal{Tenant: "acme", ActorID: "user-9", TokenID: "tok-secret-id"},
	PriorMediated: []core.ToolResult{{Success: true, ToolName: "crm/get", Result: map[string]any{"id": "42"}}},
}

// TestMediatorHTTP: the request carries the seeds' mediation context,
// signed, with the idempotency key; each answer maps onto its decision.
func TestMediatorHTTP(t *testing.T) {
	tests := []struct {
		name, answer string
		want         core.MediatorDecision
	}{
		{"proceed", `{"action":"proceed"}`, core.MediatorDecision{Action: "proceed"}},
		{"empty is proceed", `{}`, core.MediatorDecision{}},
		{"proceed and complete", `{"action":"proceed","complete":true}`, core.MediatorDecision{Action: "proceed", Complete: true}},
		{"reject", `{"action":"reject","error":"Duplicate tool call rejected.","metadata":{"error_type":"duplicate_tool_call"}}`,
			core.MediatorDecision{Action: "reject", Error: "Duplicate tool call rejected.", Metadata: map[string]any{"error_type": "duplicate_tool_call"}}},
		{"replace_result and complete", `{"action":"replace_result","result":{"success":true,"result":{"summary":"supplied by host policy","n":1}},"complete":true}`,
			core.MediatorDecision{Action: "replace_result", Complete: true, Result: map[string]any{"success": true, "result": map[string]any{"summary": "supplied by host policy", "n": json.Number("1")}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newHookServer(t, func(w http.ResponseWriter, _ *http.Request, _ map[string]any) { writeJSON(w, tc.answer) })
			med := Mediator(httpHook(t, NameMediator, srv.URL+"/mediate", ""), "crm", toolspec.OnErrorReject, nil)
			got := med(context.Background(), testMC)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("decision = %#v, want %#v", got, tc.want)
			}
			reqs := srv.requests()
			if len(reqs) != 1 || reqs[0].verify != nil {
				t.Fatalf("requests %+v", reqs)
			}
			if k := reqs[0].header.Get(toolsig.HeaderIdempotencyKey); k != "r-1:call_7:pre_tool_mediator" {
				t.Fatalf("Idempotency-Key = %q", k)
			}
			want := map[string]any{
				"hook": "pre_tool_mediator", "run_id": "r-1", "agent": "crm", "turn": json.Number("2"), "tool_name": "crm/update", "tool_call_id": "call_7",
				"parameters":      map[string]any{"id": "42", "email": "a@example.com"},
				"declaration":     map[string]any{"name": "crm/update", "source": "http"},
				"principal":       map[string]any{"tenant": "acme", "actor_id": "user-9"},
				"prior_results":   []any{map[string]any{"success": true, "tool_name": "crm/get", "result": map[string]any{"id": "42"}}},
				"idempotency_key": "r-1:call_7:pre_tool_mediator",
			}
			if !reflect.DeepEqual(reqs[0].body, want) {
				t.Fatalf("request = %#v\nwant %#v", reqs[0].body, want)
			}
		})
	}
}

// TestMediatorErrors: a hook that fails, times out or answers badly
// rejects the call (on_error reject) or lets it proceed (on_error
// proceed); the rejection does not name the endpoint.
func TestMediatorErrors(t *testing.T) {
	tests := []struct {
		name    string
		respond func(w http.ResponseWriter, r *http.Request)
		reason  string
	}{
		{"http 500", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) }, "failed"},
		{"not json", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }, "failed"},
		{"not an object", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, `"proceed"`) }, "failed"},
		{"unknown field", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, `{"acton":"reject"}`) }, "failed"},
		{"unknown action", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, `{"action":"allow"}`) }, "failed"},
		{"timeout", func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, "timed out"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newHookServer(t, func(w http.ResponseWriter, r *http.Request, _ map[string]any) { tc.respond(w, r) })
			h := httpHook(t, NameMediator, srv.URL+"/mediate?token=xyz", "200ms")
			got := Mediator(h, "crm", toolspec.OnErrorReject, nil)(context.Background(), testMC)
			want := "Tool call 'crm/update' rejected: the pre-tool mediator hook " + tc.reason
			if got.Action != core.MediatorReject || got.Error != want || got.Complete {
				t.Fatalf("decision = %#v, want a rejection %q", got, want)
			}
			if strings.Contains(got.Error, srv.URL) {
				t.Fatalf("the rejection names the endpoint: %s", got.Error)
			}
			if got := Mediator(h, "crm", toolspec.OnErrorProceed, nil)(context.Background(), testMC); got.Action != core.MediatorProceed {
				t.Fatalf("on_error proceed: decision = %#v", got)
			}
		})
	}
}

// TestCompletion: the request carries the recorded result; answers map
// onto decisions; a failed hook makes no decision.
func TestCompletion(t *testing.T) {
	cc := core.CompletionContext{RunID: "r-1", Turn: 3, ToolName: "crm/close", ToolCallID: "call_9", Result: core.ToolResult{Success: true, ToolName: "crm/close", Result: "closed"}}
	tests := []struct {
		name    string
		respond func(w http.ResponseWriter, r *http.Request)
		want    core.CompletionDecision
	}{
		{"complete", func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, `{"complete":true,"context":{"why":"closed"}}`)
		},
			core.CompletionDecision{Complete: true, Context: map[string]any{"why": "closed"}}},
		{"continue with a message", func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, `{"complete":false,"message":"Now send the summary."}`)
		}, core.CompletionDecision{Message: "Now send the summary."}},
		{"no decision", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, `{"complete":false}`) }, core.CompletionDecision{}},
		{"http 503", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }, core.CompletionDecision{}},
		{"invalid answer", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, `{"complete":"yes"}`) }, core.CompletionDecision{}},
		{"timeout", func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, core.CompletionDecision{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newHookServer(t, func(w http.ResponseWriter, r *http.Request, _ map[string]any) { tc.respond(w, r) })
			got := Completion(httpHook(t, NameCompletion, srv.URL, "200ms"), "crm", nil)(context.Background(), cc)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("decision = %#v, want %#v", got, tc.want)
			}
			reqs := srv.requests()
			want := map[string]any{"hook": "completion_policy", "run_id": "r-1", "agent": "crm", "turn": json.Number("3"), "tool_name": "crm/close", "tool_call_id": "call_9",
				"result": map[string]any{"success": true, "tool_name": "crm/close", "result": "closed"}, "idempotency_key": "r-1:call_9:completion_policy"}
			if len(reqs) != 1 || reqs[0].verify != nil || !reflect.DeepEqual(reqs[0].body, want) {
				t.Fatalf("requests %+v", reqs)
			}
		})
	}
}

// TestLambdaHooks: a lambda hook is invoked with the request as its
// event (idempotency_key included); a function error is a failed hook.
func TestLambdaHooks(t *testing.T) {
	answer := `{"action":"replace_result","result":{"cached":true}}`
	fl := &fakeLambda{fn: func(ev map[string]any) (string, []byte, error) {
		switch ev["hook"] {
		case NameMediator:
			return "", []byte(answer), nil
		case NameCompletion:
			return "Unhandled", []byte(`{"errorType":"KeyError","errorMessage":"result"}`), nil
		}
		return "", nil, errors.New("throttled")
	}}
	remote := testRemote(fl)
	fn := "arn:aws:lambda:us-east-1:123456789012:function:mediate"
	h, err := New(context.Background(), remote, NameMediator, toolspec.Executor{Type: "lambda", Function: fn})
	if err != nil {
		t.Fatal(err)
	}
	got := Mediator(h, "crm", "", nil)(context.Background(), testMC)
	if got.Action != core.MediatorReplaceResult || !reflect.DeepEqual(got.Result, map[string]any{"cached": true}) {
		t.Fatalf("decision = %#v", got)
	}
	answer = `{"action":"reject","error":"not today"}`
	if got := Mediator(h, "crm", "", nil)(context.Background(), testMC); got.Action != core.MediatorReject || got.Error != "not today" {
		t.Fatalf("decision = %#v", got)
	}
	if len(fl.events) != 2 || fl.names[0] != fn || fl.events[0]["idempotency_key"] != "r-1:call_7:pre_tool_mediator" || fl.events[0]["tool_name"] != "crm/update" {
		t.Fatalf("invocations %v %+v", fl.names, fl.events)
	}

	ch, err := New(context.Background(), remote, NameCompletion, toolspec.Executor{Type: "lambda", Function: "done"})
	if err != nil {
		t.Fatal(err)
	}
	if got := Completion(ch, "crm", nil)(context.Background(), core.CompletionContext{RunID: "r-1", ToolCallID: "c"}); !reflect.DeepEqual(got, core.CompletionDecision{}) {
		t.Fatalf("completion after a function error = %#v", got)
	}

	rule, err := NewRule(context.Background(), remote, toolspec.Executor{Type: "lambda", Function: "guard"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rule.Check(context.Background(), guardrails.Subject{Stage: guardrails.StageTool, Tool: "x/y"}); err == nil || !strings.Contains(err.Error(), "throttled") {
		t.Fatalf("rule error = %v", err)
	}
}

// TestRule: each stage sends what it checks; verdicts map; a failed call
// or an answer without allow is an error.
func TestRule(t *testing.T) {
	replaced := "[redacted]"
	tests := []struct {
		name    string
		subject guardrails.Subject
		answer  string
		wantReq map[string]any
		want    guardrails.Verdict
		wantErr string
	}{
		{"tool denied", guardrails.Subject{Stage: guardrails.StageTool, RunID: "r-1", Agent: "crm", Tenant: "acme", Tool: "crm/delete", Args: map[string]any{"id": "42"}},
			`{"allow":false,"reason":"deletes need a ticket"}`,
			map[string]any{"hook": "guardrail", "stage": "tool", "run_id": "r-1", "agent": "crm", "tenant": "acme", "tool": "crm/delete", "arguments": map[string]any{"id": "42"}},
			guardrails.Verdict{Reason: "deletes need a ticket"}, ""},
		{"tool without arguments", guardrails.Subject{Stage: guardrails.StageTool, RunID: "r-1", Agent: "crm", Tool: "crm/list"}, `{"allow":true}`,
			map[string]any{"hook": "guardrail", "stage": "tool", "run_id": "r-1", "agent": "crm", "tool": "crm/list", "arguments": map[string]any{}},
			guardrails.Verdict{Allow: true}, ""},
		{"output redacted", guardrails.Subject{Stage: guardrails.StageOutput, RunID: "r-1", Agent: "crm", Message: core.Message{Role: "assistant", Content: "call 555-0100"}},
			`{"allow":true,"reason":"ignored","replacement":"[redacted]"}`,
			map[string]any{"hook": "guardrail", "stage": "output", "run_id": "r-1", "agent": "crm", "message": map[string]any{"role": "assistant", "content": "call 555-0100"}},
			guardrails.Verdict{Allow: true, Replacement: &replaced}, ""},
		{"input", guardrails.Subject{Stage: guardrails.StageInput, RunID: "r-1", Agent: "crm", Messages: []core.Message{{Role: "user", Content: "hi"}}},
			`{"allow":false,"replacement":"not used"}`,
			map[string]any{"hook": "guardrail", "stage": "input", "run_id": "r-1", "agent": "crm", "messages": []any{map[string]any{"role": "user", "content": "hi"}}},
			guardrails.Verdict{}, ""},
		{"no allow", guardrails.Subject{Stage: guardrails.StageTool, Tool: "a/b"}, `{"reason":"?"}`, nil, guardrails.Verdict{}, "allow (true or false) is required"},
		{"unknown field", guardrails.Subject{Stage: guardrails.StageTool, Tool: "a/b"}, `{"allowed":true}`, nil, guardrails.Verdict{}, `unknown field "allowed"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newHookServer(t, func(w http.ResponseWriter, _ *http.Request, _ map[string]any) { writeJSON(w, tc.answer) })
			rule, err := ParseRule(context.Background(), testRemote(nil), map[string]any{"type": "http", "url": srv.URL, "secret_env": "HOOK_SECRET"})
			if err != nil {
				t.Fatal(err)
			}
			got, err := rule.Check(context.Background(), tc.subject)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("verdict = %#v, %v; want %#v", got, err, tc.want)
			}
			reqs := srv.requests()
			if len(reqs) != 1 || reqs[0].verify != nil || !reflect.DeepEqual(reqs[0].body, tc.wantReq) {
				t.Fatalf("request %+v\nwant %#v", reqs, tc.wantReq)
			}
			if reqs[0].header.Get(toolsig.HeaderIdempotencyKey) != "" {
				t.Fatal("a guardrail request has no idempotency key")
			}
		})
	}
}

// TestNew: a hook needs http or lambda and a signing secret, checked
// when it is built (at cold start).
func TestNew(t *testing.T) {
	for _, tc := range []struct {
		name string
		ex   toolspec.Executor
		want string
	}{
		{"go", toolspec.Executor{Type: "go", Handler: "echo"}, `pre_tool_mediator: type must be http or lambda, got "go"`},
		{"no secret", toolspec.Executor{Type: "http", URL: "http://127.0.0.1:9"}, "pre_tool_mediator: http executor: a signing secret is required"},
		{"missing env", toolspec.Executor{Type: "http", URL: "http://127.0.0.1:9", SecretEnv: "NOPE"}, "pre_tool_mediator: http executor: secret_env: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(context.Background(), testRemote(nil), NameMediator, tc.ex)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := ParseRule(context.Background(), testRemote(nil), map[string]any{"type": "lambda", "function": "f", "on_error": "deny"}); err == nil || !strings.Contains(err.Error(), "on_error is not a setting") {
		t.Fatalf("rule with on_error: %v", err)
	}
	if _, err := RuleFromJSON(context.Background(), testRemote(nil), json.RawMessage(`{"type":"http","url":"http://127.0.0.1:9/g","secret_env":"HOOK_SECRET","timeout":"1s"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := RuleFromJSON(context.Background(), testRemote(nil), json.RawMessage(`{"type":"http","url":"ftp://x","secret_env":"HOOK_SECRET"}`)); err == nil || !strings.Contains(err.Error(), "executor.url must be an http(s) URL") {
		t.Fatalf("bad url: %v", err)
	}
}
