package a2aserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
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
