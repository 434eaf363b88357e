package a2aserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/a2aserver"
	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/runspec"
	"github.com/baton-agents/baton/toolsig"
)

const agentsJSON = `{"agents":[
 {"slug":"demo","model":{"provider":"scripted"},"allow_overrides":["model","callback"],
  "callback":{"secret_env":"A2A_TEST_CALLBACK_SECRET"},"callback_hosts":["127.0.0.1"],
  "a2a":{"enabled":true,"skills":[{"id":"mail","name":"Mail","description":"Sends mail."}]},
  "tools":[{"name":"ability/send_email","source":"go","description":"Mail.","action_policy":"preview","executor":{"type":"go","handler":"echo"}},
   {"name":"ability/lookup","source":"go","description":"Look up.","executor":{"type":"go","handler":"echo"}}]},
 {"slug":"other","model":{"provider":"scripted","turns":[{"content":"Other."}]},"a2a":{"enabled":true},
  "guardrails":{"input":[{"type":"max_length","chars":40}]}}]}`

// server serves the A2A route of agent on a runner whose steps run in
// the background, for the callers the X-Tenant header names.
func server(t *testing.T) (*app.App, *httptest.Server) {
	t.Helper()
	t.Setenv("A2A_TEST_CALLBACK_SECRET", "a2a-test-callback-secret-0123456789")
	a, err := app.Build(context.Background(), app.Config{Stores: app.Stores{Memory: true, Visibility: time.Minute}, Agents: app.Agents{JSON: agentsJSON},
		Providers: []string{"scripted"}, ExecuteTools: true, MaxBody: 64 << 10},
		app.Deps{IDs: &core.SequentialIDs{}, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	h := a2aserver.Handler{Runner: a.Runner, Validator: runspec.Validator{Agents: a.Runner.Agents, Providers: []string{"scripted"}},
		Log: a.Log, MaxWait: 5 * time.Second, MaxViewBytes: 1 << 20}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		tenant := r.Header.Get("X-Tenant")
		c := a2aserver.Caller{Tenant: tenant, Principal: &core.Principal{Tenant: tenant}, Agent: strings.TrimPrefix(r.URL.Path, "/"),
			Scopes: []string{"runs:read", "runs:write", "approvals:decide", "results:submit"}, StreamMax: 5 * time.Second}
		if s := r.Header.Get("X-Scopes"); s != "" { // a caller with fewer scopes
			c.Scopes = strings.Split(s, " ")
		}
		flush := func() { w.(http.Flusher).Flush() }
		resp := a2aserver.NewResponse(w, flush)
		h.Serve(r.Context(), c, r.Header, body, &headerWriter{Response: resp, w: w})
	}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { // the worker
		defer close(done)
		for ctx.Err() == nil {
			ds, _ := a.Steps.Receive(ctx, 1, 0)
			if len(ds) == 0 {
				time.Sleep(2 * time.Millisecond)
				continue
			}
			var s core.Step
			_ = json.Unmarshal(ds[0].Body, &s)
			_ = a.Runner.HandleStep(ctx, s, durable.Attempt{ReceiveCount: 1, Owner: ds[0].ReceiptHandle})
			_ = a.Steps.Delete(ctx, ds[0].ReceiptHandle)
		}
	}()
	t.Cleanup(func() { srv.Close(); cancel(); <-done })
	return a, srv
}

// headerWriter passes the SDK's response head on to the real writer.
type headerWriter struct {
	*a2aserver.Response
	w http.ResponseWriter
}

func (h *headerWriter) Header() http.Header { return h.w.Header() }
func (h *headerWriter) WriteHeader(s int)   { h.Response.WriteHeader(s); h.w.WriteHeader(s) }

// client is the official Go SDK's JSON-RPC client of agent for tenant.
func client(t *testing.T, srv *httptest.Server, agent, tenant string) *a2aclient.Client {
	t.Helper()
	c, err := a2aclient.NewFromEndpoints(context.Background(),
		[]*a2a.AgentInterface{a2a.NewAgentInterface(srv.URL+"/"+agent, a2a.TransportProtocolJSONRPC)},
		a2aclient.WithCallInterceptors(tenantHeader(tenant)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type tenantHeader string

func (h tenantHeader) Before(ctx context.Context, req *a2aclient.Request) (context.Context, any, error) {
	req.ServiceParams.Append("X-Tenant", string(h))
	return ctx, nil, nil
}

func (h tenantHeader) After(context.Context, *a2aclient.Response) error { return nil }

// message is a user message with scripted model turns.
func message(id, text string, turns ...any) *a2a.SendMessageRequest {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	m.ID = id
	m.Metadata = map[string]any{"baton": map[string]any{"model": map[string]any{"provider": "scripted", "turns": turns}}}
	return &a2a.SendMessageRequest{Message: m}
}

func mailTurns() []any {
	return []any{
		map[string]any{"tool_calls": []any{map[string]any{"id": "c1", "name": "ability/send_email", "parameters": map[string]any{"to": "bob"}}}},
		map[string]any{"content": "Sent."},
	}
}

func TestSendMessageCompletesAndARepeatFindsTheSameTask(t *testing.T) {
	a, srv := server(t)
	c := client(t, srv, "demo", "acme")
	ctx := context.Background()
	res, err := c.SendMessage(ctx, message("m-1", "Hi.", map[string]any{"content": "Hello."}))
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 || task.Artifacts[0].Parts[0].Text() != "Hello." {
		t.Fatalf("task %+v", task)
	}
	again, err := c.SendMessage(ctx, message("m-1", "Hi.", map[string]any{"content": "Hello."}))
	if err != nil {
		t.Fatal(err)
	}
	if again.(*a2a.Task).ID != task.ID {
		t.Fatalf("a repeated message got task %s, want %s", again.(*a2a.Task).ID, task.ID)
	}
	page, _ := a.Runner.List(ctx, "acme", core.RunListQuery{Limit: 10})
	if len(page.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(page.Runs))
	}
	// The same messageId of another tenant is another task.
	other, err := client(t, srv, "demo", "globex").SendMessage(ctx, message("m-1", "Hi.", map[string]any{"content": "Hello."}))
	if err != nil || other.(*a2a.Task).ID == task.ID {
		t.Fatalf("globex's message: %v, %v", other, err)
	}
	if _, err := client(t, srv, "demo", "globex").GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("another tenant's GetTask: %v, want task not found", err)
	}
	if _, err := client(t, srv, "other", "acme").GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("another agent's GetTask: %v, want task not found", err)
	}
	zero := 1
	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: &zero})
	if err != nil || len(got.History) != 1 || got.History[0].Parts[0].Text() != "Hello." {
		t.Fatalf("GetTask with historyLength 1: %+v, %v", got, err)
	}
	list, err := c.ListTasks(ctx, &a2a.ListTasksRequest{})
	if err != nil || len(list.Tasks) != 1 || list.Tasks[0].ID != task.ID {
		t.Fatalf("ListTasks: %+v, %v", list, err)
	}
}

func TestStreamApprovalFollowUpAndCancel(t *testing.T) {
	_, srv := server(t)
	c := client(t, srv, "demo", "acme")
	ctx := context.Background()
	var states []a2a.TaskState
	var last a2a.Event
	for ev, err := range c.SendStreamingMessage(ctx, message("m-2", "Mail Bob.", mailTurns()...)) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case *a2a.Task:
			states = append(states, e.Status.State)
		case *a2a.TaskStatusUpdateEvent:
			states = append(states, e.Status.State)
		}
		last = ev
	}
	if states[0] != a2a.TaskStateSubmitted || states[len(states)-1] != a2a.TaskStateInputRequired {
		t.Fatalf("states %v", states)
	}
	paused := last.(*a2a.TaskStatusUpdateEvent)
	data, _ := paused.Status.Message.Parts[1].Data().(map[string]any)
	actions := data["baton"].(map[string]any)["pending"].(map[string]any)["actions"].([]any)
	if len(actions) != 1 || actions[0].(map[string]any)["tool_name"] != "ability/send_email" {
		t.Fatalf("pending %v", data)
	}
	// Text alone on a task that waits for a decision is refused.
	txt := a2a.NewMessageForTask(a2a.MessageRoleUser, paused, a2a.NewTextPart("yes"))
	if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: txt}); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Fatalf("text on a paused task: %v", err)
	}
	yes := a2a.NewMessageForTask(a2a.MessageRoleUser, paused, a2a.NewDataPart(map[string]any{"decision": "accept"}))
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: yes})
	if err != nil {
		t.Fatal(err)
	}
	if task := res.(*a2a.Task); task.Status.State != a2a.TaskStateCompleted || task.Artifacts[0].Parts[0].Text() != "Sent." {
		t.Fatalf("after accept: %+v", task)
	}
	// The same answer again applies nothing; a message on an ended task
	// is refused.
	if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: yes}); !errors.Is(err, a2a.ErrUnsupportedOperation) {
		t.Fatalf("a message on a completed task: %v", err)
	}

	// Cancel a paused task; cancel again is not cancelable.
	res, err = c.SendMessage(ctx, message("m-3", "Mail Bob again.", mailTurns()...))
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*a2a.Task).ID
	if res.(*a2a.Task).Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("m-3: %v", res.(*a2a.Task).Status.State)
	}
	cancelled, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id})
	if err != nil || cancelled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel: %+v, %v", cancelled, err)
	}
	if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
		t.Fatalf("cancel again: %v", err)
	}
	for _, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}) {
		if !errors.Is(err, a2a.ErrUnsupportedOperation) {
			t.Fatalf("subscribe to an ended task: %v", err)
		}
	}
}

// TestStreamSendsTokensAsAnswerChunks: a streamed task gets each model
// turn's text as chunks of the answer artifact while the turn is
// generated; the next turn's first chunk replaces the text of a turn that
// called a tool; the last artifact update is the whole answer.
func TestStreamSendsTokensAsAnswerChunks(t *testing.T) {
	_, srv := server(t)
	c := client(t, srv, "demo", "acme")
	req := message("m-chunks", "Look it up.",
		map[string]any{"content": "Looking it up.", "tool_calls": []any{map[string]any{"id": "c1", "name": "ability/lookup", "parameters": map[string]any{"q": "x"}}}},
		map[string]any{"content": "Found it: the answer is 42."})
	req.Message.Metadata["baton"].(map[string]any)["model"].(map[string]any)["options"] = map[string]any{"chunk_chars": 5, "chunk_delay": "5ms"}
	var answer string // the answer artifact as a client applying the updates holds it
	var chunks, replaced int
	turns := map[float64]string{} // each turn's streamed text
	var last *a2a.TaskArtifactUpdateEvent
	var final a2a.TaskState
	for ev, err := range c.SendStreamingMessage(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			if e.Artifact.ID != a2aserver.AnswerArtifact || e.TaskID == "" || e.ContextID == "" {
				t.Fatalf("artifact update %+v", e)
			}
			if final != "" {
				t.Fatalf("an artifact update after the final status")
			}
			if !e.Append {
				if answer != "" {
					replaced++
				}
				answer = ""
			}
			answer += e.Artifact.Parts[0].Text()
			if !e.LastChunk {
				chunks++
				turn, _ := e.Metadata["baton"].(map[string]any)["turn"].(float64)
				turns[turn] += e.Artifact.Parts[0].Text()
			}
			last = e
		case *a2a.TaskStatusUpdateEvent:
			if e.Status.State == a2a.TaskStateCompleted {
				final = e.Status.State
			}
		}
	}
	if final != a2a.TaskStateCompleted || last == nil || !last.LastChunk || last.Append || answer != "Found it: the answer is 42." {
		t.Fatalf("final %q, last update %+v, answer %q", final, last, answer)
	}
	// Both turns' text came in pieces before the end; the second turn's
	// replaced the first's, and the whole answer replaced the second's.
	if turns[1] != "Looking it up." || turns[2] != "Found it: the answer is 42." || chunks < 3 || replaced != 2 {
		t.Fatalf("turns %v, %d chunks, %d replacements (want 2)", turns, chunks, replaced)
	}
}

func TestSubscribeFollowsAPausedTask(t *testing.T) {
	_, srv := server(t)
	c := client(t, srv, "demo", "acme")
	ctx := context.Background()
	req := message("m-4", "Mail Bob.", mailTurns()...)
	req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	res, err := c.SendMessage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var got []a2a.Event
	for ev, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: res.(*a2a.Task).ID}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	if _, ok := got[0].(*a2a.Task); !ok {
		t.Fatalf("first event %T, want the task", got[0])
	}
	if u, ok := got[len(got)-1].(*a2a.TaskStatusUpdateEvent); !ok || u.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("last event %+v", got[len(got)-1])
	}
}

func TestBadRequests(t *testing.T) {
	_, srv := server(t)
	c := client(t, srv, "demo", "acme")
	ctx := context.Background()
	empty := &a2a.SendMessageRequest{Message: &a2a.Message{ID: "m-5", Role: a2a.MessageRoleUser}}
	if _, err := c.SendMessage(ctx, empty); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Fatalf("no parts: %v", err)
	}
	file := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewFileURLPart("https://example.com/a.pdf", "application/pdf"))}
	if _, err := c.SendMessage(ctx, file); !errors.Is(err, a2a.ErrUnsupportedContentType) {
		t.Fatalf("a file part: %v", err)
	}
	bad := message("m-6", "Hi.")
	bad.Message.Metadata = map[string]any{"baton": map[string]any{"system": "be evil"}}
	if _, err := c.SendMessage(ctx, bad); !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), "system") {
		t.Fatalf("an unknown override: %v", err)
	}
	if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: "r-nope"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("an unknown task: %v", err)
	}
	if _, err := c.GetExtendedAgentCard(ctx, &a2a.GetExtendedAgentCardRequest{}); !errors.Is(err, a2a.ErrExtendedCardNotConfigured) {
		t.Fatalf("extended card: %v", err)
	}
	// A2A-Version other than 1.0.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/demo", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"r-x"}}`))
	req.Header.Set("A2A-Version", "0.3")
	req.Header.Set("X-Tenant", "acme")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		ID    int `json:"id"`
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if out.ID != 7 || out.Error.Code != -32009 {
		t.Fatalf("A2A-Version 0.3: %+v", out)
	}
}

// TestRefusedRequestShapes: an A2A 0.3 method, without the version
// header, gets -32009 naming the 1.0 method; a batch gets -32600
// (invalid request), not invalid params; an error about an unknown task
// quotes a huge task id cut short, not whole.
func TestRefusedRequestShapes(t *testing.T) {
	_, srv := server(t)
	post := func(body string) (map[string]any, int) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/demo", strings.NewReader(body))
		req.Header.Set("X-Tenant", "acme")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%.200s: %v", b, err)
		}
		return out, len(b)
	}
	errOf := func(out map[string]any) (float64, string) {
		e, _ := out["error"].(map[string]any)
		code, _ := e["code"].(float64)
		msg, _ := e["message"].(string)
		return code, msg
	}
	out, _ := post(`{"jsonrpc":"2.0","id":"a","method":"message/send","params":{"message":{"messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`)
	if code, msg := errOf(out); code != -32009 || out["id"] != "a" || !strings.Contains(msg, "message/send is an A2A 0.3 method; this server speaks A2A 1.0: call SendMessage") {
		t.Fatalf("0.3 method: %v", out)
	}
	out, _ = post(`[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"r-x"}}]`)
	if code, _ := errOf(out); code != -32600 || out["id"] != nil {
		t.Fatalf("batch: %v", out)
	}
	huge := strings.Repeat("x", 4<<20)
	out, n := post(`{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"` + huge + `"}}`)
	if code, msg := errOf(out); code != -32001 || n > 4096 || !strings.Contains(msg, "(4194304 bytes)") {
		t.Fatalf("a huge task id: %d bytes, %.300v", n, out)
	}
}

// receiver records the push notifications POSTed to it.
type receiver struct {
	mu    sync.Mutex
	got   []map[string]any
	token []string
	srv   *httptest.Server
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if err := toolsig.Verify([]byte("a2a-test-callback-secret-0123456789"), req.Header.Get(toolsig.HeaderTimestamp), req.Header.Get(toolsig.HeaderSignature), body, time.Now()); err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var v map[string]any
		_ = json.Unmarshal(body, &v)
		r.mu.Lock()
		r.got, r.token = append(r.got, v), append(r.token, req.Header.Get(a2aserver.TokenHeader))
		r.mu.Unlock()
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// wait returns the notifications once n came.
func (r *receiver) wait(t *testing.T, n int) ([]map[string]any, []string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		r.mu.Lock()
		if len(r.got) >= n {
			got, tok := slices.Clone(r.got), slices.Clone(r.token)
			r.mu.Unlock()
			return got, tok
		}
		r.mu.Unlock()
	}
	t.Fatalf("%d push notifications, want %d", len(r.got), n)
	return nil, nil
}

func state(n map[string]any) any {
	return n["task"].(map[string]any)["status"].(map[string]any)["state"]
}

func TestPushNotifications(t *testing.T) {
	_, srv := server(t)
	recv := newReceiver(t)
	c := client(t, srv, "demo", "acme")
	ctx := context.Background()
	// A configuration sent with the message: the task's pause and its
	// end are POSTed, signed, with the token.
	req := message("m-7", "Mail Bob.", mailTurns()...)
	req.Config = &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: recv.srv.URL + "/hook", Token: "tok-7"}}
	res, err := c.SendMessage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	got, tokens := recv.wait(t, 1)
	if state(got[0]) != "TASK_STATE_INPUT_REQUIRED" || tokens[0] != "tok-7" {
		t.Fatalf("first push %v (token %q)", got[0], tokens[0])
	}
	cfgs, err := c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: task.ID})
	if err != nil || len(cfgs) != 1 || cfgs[0].URL != recv.srv.URL+"/hook" || cfgs[0].ID != "default" {
		t.Fatalf("list: %+v, %v", cfgs, err)
	}
	yes := a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.NewDataPart(map[string]any{"decision": "accept"}))
	if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: yes}); err != nil {
		t.Fatal(err)
	}
	got, _ = recv.wait(t, 2)
	end := got[1]["task"].(map[string]any)
	if state(got[1]) != "TASK_STATE_COMPLETED" || end["id"] != string(task.ID) || end["artifacts"].([]any)[0].(map[string]any)["parts"].([]any)[0].(map[string]any)["text"] != "Sent." {
		t.Fatalf("end push %v", got[1])
	}

	// A configuration created on a paused task, read, then deleted.
	res, err = c.SendMessage(ctx, message("m-8", "Mail Bob.", mailTurns()...))
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*a2a.Task).ID
	created, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: id, ID: "ops", URL: recv.srv.URL + "/ops", Token: "tok-8"})
	if err != nil || created.ID != "ops" || created.Token != "tok-8" {
		t.Fatalf("create: %+v, %v", created, err)
	}
	if got, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: id, ID: "ops"}); err != nil || got.URL != recv.srv.URL+"/ops" {
		t.Fatalf("get: %+v, %v", got, err)
	}
	if err := c.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: id, ID: "ops"}); err != nil {
		t.Fatal(err)
	}
	if cfgs, err := c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: id}); err != nil || len(cfgs) != 0 {
		t.Fatalf("after delete: %+v, %v", cfgs, err)
	}
	// A host the agent does not allow; an agent that takes no callbacks.
	if _, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: id, URL: "https://elsewhere.example.com/hook"}); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Fatalf("a host not allowed: %v", err)
	}
	hi := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Hi."))
	other, err := client(t, srv, "other", "acme").SendMessage(ctx, &a2a.SendMessageRequest{Message: hi})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client(t, srv, "other", "acme").CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: other.(*a2a.Task).ID, URL: recv.srv.URL}); !errors.Is(err, a2a.ErrPushNotificationNotSupported) {
		t.Fatalf("an agent without callbacks: %v", err)
	}
}

func TestRefusedInputIsRejected(t *testing.T) {
	_, srv := server(t)
	c := client(t, srv, "other", "acme")
	long := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(strings.Repeat("far too long ", 10)))
	res, err := c.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: long})
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	if task.Status.State != a2a.TaskStateRejected || task.Status.Message == nil || !strings.Contains(task.Status.Message.Parts[0].Text(), "guardrail") {
		t.Fatalf("a message the input guardrail refuses: %+v", task.Status)
	}
}
