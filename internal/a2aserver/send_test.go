package a2aserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
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
