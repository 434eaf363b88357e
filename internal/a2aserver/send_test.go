package a2aserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/runspec"
)

// TestVersionHeader: a request's A2A-Version, when sent, must name 1.0
// ("1" is read as 1.0, blanks around it do not count); anything else is
// -32009. A GetTask of an unknown task tells which: -32001 when the
// version is served.
func TestVersionHeader(t *testing.T) {
	_, srv := server(t)
	for _, tc := range []struct {
		header []string // nil: no header
		want   float64
	}{
		{nil, -32001},
		{[]string{"1.0"}, -32001},
		{[]string{"1"}, -32001},
		{[]string{" 1.0 "}, -32001},
		{[]string{""}, -32001},
		{[]string{" "}, -32001},
		{[]string{"0.3"}, -32009},
		{[]string{"2.0"}, -32009},
		{[]string{"1.1"}, -32009},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/demo", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"r-x"}}`))
		req.Header.Set("X-Tenant", "acme")
		for _, v := range tc.header {
			req.Header.Add("A2A-Version", v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Error struct {
				Code float64 `json:"code"`
			} `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if out.Error.Code != tc.want {
			t.Errorf("A2A-Version %q: error %v, want %v", tc.header, out.Error.Code, tc.want)
		}
	}
}

// TestSendInContext: a message with a contextId starts its task in that
// context; a second message there while the first task waits for input
// is refused (unsupported operation, naming the context); a message on
// the task with another contextId is invalid params.
func TestSendInContext(t *testing.T) {
	_, srv := server(t)
	c := client(t, srv, "demo", "acme")
	ctx := context.Background()
	req := message("c-1", "Mail Bob.", mailTurns()...)
	req.Message.ContextID = "ctx-mine"
	res, err := c.SendMessage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	if task.ContextID != "ctx-mine" || task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("task in context %q, state %s; want ctx-mine, input required", task.ContextID, task.Status.State)
	}
	again := message("c-2", "Hi.", map[string]any{"content": "Hello."})
	again.Message.ContextID = "ctx-mine"
	if _, err := c.SendMessage(ctx, again); !errors.Is(err, a2a.ErrUnsupportedOperation) || !strings.Contains(err.Error(), "context ctx-mine has an unfinished task") {
		t.Fatalf("a second task in a busy context: %v", err)
	}
	wrong := a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.NewDataPart(map[string]any{"decision": "accept"}))
	wrong.ContextID = "ctx-other"
	if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: wrong}); !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), "contextId ctx-other") {
		t.Fatalf("an answer in another context: %v", err)
	}
	// Without a contextId, each message is its own context.
	one, err := c.SendMessage(ctx, message("c-3", "Hi.", map[string]any{"content": "Hello."}))
	if err != nil {
		t.Fatal(err)
	}
	two, err := c.SendMessage(ctx, message("c-4", "Hi.", map[string]any{"content": "Hello."}))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := one.(*a2a.Task).ContextID, two.(*a2a.Task).ContextID; a == "" || a == b || a == "ctx-mine" {
		t.Fatalf("contexts %q and %q", a, b)
	}
}

type scopesHeader string

func (h scopesHeader) Before(ctx context.Context, req *a2aclient.Request) (context.Context, any, error) {
	req.ServiceParams.Append("X-Tenant", "acme")
	req.ServiceParams.Append("X-Scopes", string(h))
	return ctx, nil, nil
}

func (h scopesHeader) After(context.Context, *a2aclient.Response) error { return nil }

// TestAnswerRefusals: an answer on a paused task needs the scope of what
// it answers (approvals:decide, results:submit), must name a pending item
// (invalid params naming the item), and must say something.
func TestAnswerRefusals(t *testing.T) {
	_, srv := server(t)
	c := client(t, srv, "demo", "acme")
	ctx := context.Background()
	res, err := c.SendMessage(ctx, message("a-1", "Mail Bob.", mailTurns()...))
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("state %s", task.Status.State)
	}
	readOnly, err := a2aclient.NewFromEndpoints(ctx,
		[]*a2a.AgentInterface{a2a.NewAgentInterface(srv.URL+"/demo", a2a.TransportProtocolJSONRPC)},
		a2aclient.WithCallInterceptors(scopesHeader("runs:read runs:write")))
	if err != nil {
		t.Fatal(err)
	}
	approver, err := a2aclient.NewFromEndpoints(ctx,
		[]*a2a.AgentInterface{a2a.NewAgentInterface(srv.URL+"/demo", a2a.TransportProtocolJSONRPC)},
		a2aclient.WithCallInterceptors(scopesHeader("runs:read runs:write approvals:decide")))
	if err != nil {
		t.Fatal(err)
	}
	on := func(v map[string]any) *a2a.SendMessageRequest {
		return &a2a.SendMessageRequest{Message: a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.NewDataPart(v))}
	}
	result := map[string]any{"tool_results": []any{map[string]any{"request_id": "q-nope", "success": true}}}
	for _, tc := range []struct {
		name   string
		c      *a2aclient.Client
		answer map[string]any
		want   error
		says   string
	}{
		{"a decision without approvals:decide", readOnly, map[string]any{"decision": "accept"}, a2a.ErrUnauthorized, "approvals:decide"},
		{"decisions without approvals:decide", readOnly, map[string]any{"decisions": []any{map[string]any{"action_id": "x", "decision": "accept"}}}, a2a.ErrUnauthorized, "approvals:decide"},
		{"a result without results:submit", readOnly, result, a2a.ErrUnauthorized, "results:submit"},
		{"a result nothing waits for", c, result, a2a.ErrInvalidParams, "has no pending item q-nope"},
		{"a decision without results:submit", approver, map[string]any{"decisions": []any{map[string]any{"action_id": "act-nope", "decision": "accept"}}}, a2a.ErrInvalidParams, "has no pending item act-nope"},
		{"a decision on an unknown action", c, map[string]any{"decisions": []any{map[string]any{"action_id": "act-nope", "decision": "accept"}}}, a2a.ErrInvalidParams, "has no pending item act-nope"},
		{"nothing", c, map[string]any{}, a2a.ErrInvalidParams, "the message says nothing"},
	} {
		if _, err := tc.c.SendMessage(ctx, on(tc.answer)); !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want %v saying %q", tc.name, err, tc.want, tc.says)
		}
	}
	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("after the refused answers: %+v, %v", got, err)
	}
}

// TestAnswerClientToolTask: a task that waits for a client tool's result
// (a run started over POST /v1/runs with a client tool) refuses text
// with what it waits for, and a decision (it waits for no approval); its
// tool result completes it. The run's principal is the caller's, marked
// as an A2A request.
func TestAnswerClientToolTask(t *testing.T) {
	a, srv := server(t)
	c := client(t, srv, "demo", "acme")
	ctx := context.Background()
	var body runspec.Body
	if err := json.Unmarshal([]byte(`{"agent":"demo","messages":[{"role":"user","content":"Calendar?"}],
		"tools":[{"name":"client/get_calendar","description":"Read the calendar.","parameters":{"type":"object","properties":{"day":{"type":"string"}}}}],
		"model":{"provider":"scripted","turns":[{"tool_calls":[{"id":"c1","name":"client/get_calendar","parameters":{"day":"monday"}}]},{"content":"Monday is free."}]}}`), &body); err != nil {
		t.Fatal(err)
	}
	sreq, err := runspec.Validator{Agents: a.Runner.Agents, Providers: []string{"scripted"}}.Request(body)
	if err != nil {
		t.Fatal(err)
	}
	sreq.Principal = &core.Principal{Tenant: "acme"}
	snap, err := a.Runner.Start(ctx, "acme", sreq)
	if err != nil {
		t.Fatal(err)
	}
	task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(snap.State.RunID)})
	for deadline := time.Now().Add(5 * time.Second); err == nil && task.Status.State == a2a.TaskStateWorking && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		task, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	}
	if err != nil || task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("the client tool task: %+v, %v", task, err)
	}
	if txt := task.Status.Message.Parts[0].Text(); !strings.Contains(txt, "return the result of client tool client/get_calendar") {
		t.Fatalf("status message %q", txt)
	}
	data, _ := task.Status.Message.Parts[1].Data().(map[string]any)
	reqs := data["baton"].(map[string]any)["pending"].(map[string]any)["tool_requests"].([]any)
	reqID := reqs[0].(map[string]any)["request_id"].(string)
	on := func(p *a2a.Part) *a2a.SendMessageRequest {
		return &a2a.SendMessageRequest{Message: a2a.NewMessageForTask(a2a.MessageRoleUser, task, p)}
	}
	if _, err := c.SendMessage(ctx, on(a2a.NewTextPart("Monday?"))); !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), "client tool client/get_calendar (request "+reqID+")") {
		t.Fatalf("text on a task waiting for a client tool: %v", err)
	}
	if _, err := c.SendMessage(ctx, on(a2a.NewDataPart(map[string]any{"decision": "accept"}))); !errors.Is(err, a2a.ErrUnsupportedOperation) || !strings.Contains(err.Error(), "waits for no approval") {
		t.Fatalf("a decision on a task waiting for a client tool: %v", err)
	}
	res, err := c.SendMessage(ctx, on(a2a.NewDataPart(map[string]any{"tool_results": []any{map[string]any{"request_id": reqID, "success": true, "result": "free"}}})))
	if err != nil || res.(*a2a.Task).Status.State != a2a.TaskStateCompleted {
		t.Fatalf("the tool result: %+v, %v", res, err)
	}
}

// TestStartedRunPrincipal: a task's run carries the caller's principal,
// its request context a2a and the route's agent.
func TestStartedRunPrincipal(t *testing.T) {
	a, srv := server(t)
	res, err := client(t, srv, "demo", "acme").SendMessage(context.Background(), message("p-1", "Hi.", map[string]any{"content": "Hello."}))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := a.Runner.Get(context.Background(), "acme", string(res.(*a2a.Task).ID))
	if err != nil {
		t.Fatal(err)
	}
	if p := snap.State.Config.Principal; p == nil || p.Tenant != "acme" || p.RequestContext != "a2a" || p.AgentID != "demo" {
		t.Fatalf("principal %+v", p)
	}
}

// TestPushConfigRefusals: a configuration with credentials other than the
// token is refused; get and delete of a configuration id the task does
// not have are invalid params (no id: the task's one).
func TestPushConfigRefusals(t *testing.T) {
	_, srv := server(t)
	recv := newReceiver(t)
	c := client(t, srv, "demo", "acme")
	ctx := context.Background()
	res, err := c.SendMessage(ctx, message("pc-1", "Mail Bob.", mailTurns()...))
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*a2a.Task).ID
	if _, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: id, URL: recv.srv.URL, Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "x"}}); !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), "authentication") {
		t.Fatalf("a configuration with credentials: %v", err)
	}
	if _, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: id, ID: "ops", URL: recv.srv.URL, Auth: &a2a.PushAuthInfo{}}); err != nil {
		t.Fatalf("a configuration with an empty authentication: %v", err)
	}
	if _, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: id, ID: "nope"}); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Fatalf("get of another id: %v", err)
	}
	if err := c.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: id, ID: "nope"}); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Fatalf("delete of another id: %v", err)
	}
	if got, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: id, ID: "ops"}); err != nil || got.ID != "ops" {
		t.Fatalf("get of its id: %+v, %v", got, err)
	}
	if err := c.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: id, ID: "ops"}); err != nil {
		t.Fatalf("delete of its id: %v", err)
	}
}

// TestStreamAnswer: a streamed answer on a paused task streams from the
// answer on: its first update is the approval decided, its last the
// completed status.
func TestStreamAnswer(t *testing.T) {
	_, srv := server(t)
	c := client(t, srv, "demo", "acme")
	ctx := context.Background()
	res, err := c.SendMessage(ctx, message("sa-1", "Mail Bob.", mailTurns()...))
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	yes := a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.NewDataPart(map[string]any{"decision": "accept"}))
	var events []string
	var final a2a.TaskState
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: yes}) {
		if err != nil {
			t.Fatal(err)
		}
		if u, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
			if b, _ := u.Metadata["baton"].(map[string]any); b["event"] != nil {
				e, _ := b["event"].(string)
				events = append(events, e)
			}
			final = u.Status.State
		}
	}
	if len(events) == 0 || events[0] != core.EventApprovalDecided || final != a2a.TaskStateCompleted {
		t.Fatalf("events %v, final state %s; want approval_decided first, completed last", events, final)
	}
}

// TestSubscribeFromItsStart: a subscription to a task that has not made
// its first step yet (its turn streams for about 3.6 s, and a step's
// events are written at its end) streams every step of progress after
// the task as it was: the first turn's start, its tool call and result,
// the second turn's start.
func TestSubscribeFromItsStart(t *testing.T) {
	_, srv := server(t)
	c := client(t, srv, "demo", "acme")
	ctx := context.Background()
	req := message("sub-1", "Look it up.",
		map[string]any{"content": strings.Repeat("Looking. ", 40), "tool_calls": []any{map[string]any{"id": "c1", "name": "ability/lookup", "parameters": map[string]any{"q": "x"}}}},
		map[string]any{"content": "Found it."})
	req.Message.Metadata["baton"].(map[string]any)["model"].(map[string]any)["options"] = map[string]any{"chunk_chars": 1, "chunk_delay": "10ms"}
	req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	res, err := c.SendMessage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	var final a2a.TaskState
	for ev, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: res.(*a2a.Task).ID}) {
		if err != nil {
			t.Fatal(err)
		}
		if u, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
			if b, _ := u.Metadata["baton"].(map[string]any); b["event"] != nil {
				e, _ := b["event"].(string)
				events = append(events, e)
			}
			final = u.Status.State
		}
	}
	want := []string{core.EventTurnStarted, core.EventToolCall, core.EventToolResult, core.EventTurnStarted}
	if !slices.Equal(events, want) || final != a2a.TaskStateCompleted {
		t.Fatalf("events %v, final %s; want %v, and completed", events, final, want)
	}
}
