package a2aserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// TestListTasks: ListTasks gives the caller's tasks of the route's agent,
// newest first (not another agent's, not another tenant's), filtered by
// context, state and status time, a page at a time, with history and
// artifacts only when asked; a page size out of range is refused.
func TestListTasks(t *testing.T) {
	_, srv := server(t)
	ctx := context.Background()
	demo := client(t, srv, "demo", "acme")
	send := func(c *a2aclient.Client, id, text string, turns ...any) *a2a.Task {
		t.Helper()
		res, err := c.SendMessage(ctx, message(id, text, turns...))
		if err != nil {
			t.Fatal(err)
		}
		return res.(*a2a.Task)
	}
	list := func(req *a2a.ListTasksRequest) *a2a.ListTasksResponse {
		t.Helper()
		got, err := demo.ListTasks(ctx, req)
		if err != nil {
			t.Fatalf("ListTasks %+v: %v", req, err)
		}
		if got.TotalSize != len(got.Tasks) {
			t.Fatalf("totalSize %d for %d tasks", got.TotalSize, len(got.Tasks))
		}
		return got
	}
	ids := func(r *a2a.ListTasksResponse) []a2a.TaskID {
		out := []a2a.TaskID{}
		for _, task := range r.Tasks {
			out = append(out, task.ID)
		}
		return out
	}
	same := func(what string, got, want []a2a.TaskID) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: tasks %v, want %v", what, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: tasks %v, want %v", what, got, want)
			}
		}
	}

	one := send(demo, "l-1", "One.", map[string]any{"content": "Done one."})
	time.Sleep(2 * time.Millisecond) // distinct creation times
	paused := send(demo, "l-2", "Mail Bob.", mailTurns()...)
	time.Sleep(2 * time.Millisecond)
	three := send(demo, "l-3", "Three.", map[string]any{"content": "Done three."})
	plain := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Hi."))
	plain.ID = "l-4"
	if _, err := client(t, srv, "other", "acme").SendMessage(ctx, &a2a.SendMessageRequest{Message: plain}); err != nil {
		t.Fatal(err)
	}
	send(client(t, srv, "demo", "globex"), "l-5", "Hi.", map[string]any{"content": "Elsewhere."})
	if paused.Status.State != a2a.TaskStateInputRequired || three.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("tasks %s %s", paused.Status.State, three.Status.State)
	}

	all := list(&a2a.ListTasksRequest{})
	same("all", ids(all), []a2a.TaskID{three.ID, paused.ID, one.ID})
	if all.PageSize != 50 || all.NextPageToken != "" {
		t.Fatalf("default page: size %d, next %q", all.PageSize, all.NextPageToken)
	}
	for _, task := range all.Tasks {
		if len(task.History) != 0 || len(task.Artifacts) != 0 {
			t.Fatalf("task %s without historyLength or includeArtifacts: %d history, %d artifacts", task.ID, len(task.History), len(task.Artifacts))
		}
	}

	// A paused task says what it waits for, without being asked for
	// history or artifacts.
	if got := all.Tasks[1]; got.Status.Message == nil || !strings.Contains(got.Status.Message.Parts[0].Text(), "approve or reject ability/send_email") {
		t.Fatalf("the paused task in a plain list says nothing of what it waits for: %+v", got.Status)
	}
	h := 1
	if got := list(&a2a.ListTasksRequest{HistoryLength: &h}).Tasks[0]; len(got.History) != 1 || len(got.Artifacts) != 0 {
		t.Fatalf("history without artifacts: %d history, %d artifacts", len(got.History), len(got.Artifacts))
	}
	full := list(&a2a.ListTasksRequest{HistoryLength: &h, IncludeArtifacts: true})
	if got := full.Tasks[0]; len(got.History) != 1 || len(got.Artifacts) != 1 || got.Artifacts[0].Parts[0].Text() != "Done three." {
		t.Fatalf("the completed task with history and artifacts: %+v", got)
	}
	if got := full.Tasks[1]; len(got.Artifacts) != 0 || len(got.History) != 1 {
		t.Fatalf("the paused task: %d artifacts, %d history", len(got.Artifacts), len(got.History))
	}
	// Artifacts alone read a completed task's answer; a paused task's
	// pending approval reads its view too.
	arts := list(&a2a.ListTasksRequest{IncludeArtifacts: true})
	if got := arts.Tasks[2]; len(got.Artifacts) != 1 || got.Artifacts[0].Parts[0].Text() != "Done one." || len(got.History) != 0 {
		t.Fatalf("artifacts without history: %+v", got)
	}

	same("input-required", ids(list(&a2a.ListTasksRequest{Status: a2a.TaskStateInputRequired})), []a2a.TaskID{paused.ID})
	same("completed", ids(list(&a2a.ListTasksRequest{Status: a2a.TaskStateCompleted})), []a2a.TaskID{three.ID, one.ID})
	same("context", ids(list(&a2a.ListTasksRequest{ContextID: one.ContextID})), []a2a.TaskID{one.ID})
	last := *three.Status.Timestamp
	same("updated after the last", ids(list(&a2a.ListTasksRequest{StatusTimestampAfter: &last})), []a2a.TaskID{})
	before := one.Status.Timestamp.Add(-time.Second)
	same("updated after the first", ids(list(&a2a.ListTasksRequest{StatusTimestampAfter: &before})), []a2a.TaskID{three.ID, paused.ID, one.ID})

	var paged []a2a.TaskID
	token := ""
	for pages := 0; ; pages++ {
		if pages == 5 {
			t.Fatal("paging does not end")
		}
		p := list(&a2a.ListTasksRequest{PageSize: 1, PageToken: token})
		if p.PageSize != 1 || len(p.Tasks) > 1 {
			t.Fatalf("a page of 1: size %d, %d tasks", p.PageSize, len(p.Tasks))
		}
		paged = append(paged, ids(p)...)
		if token = p.NextPageToken; token == "" {
			break
		}
	}
	same("paged", paged, []a2a.TaskID{three.ID, paused.ID, one.ID})
	same("a page of 100", ids(list(&a2a.ListTasksRequest{PageSize: 100})), []a2a.TaskID{three.ID, paused.ID, one.ID})

	// The page size and history length over plain JSON-RPC (the SDK's
	// client checks them before sending, its server before the handler
	// is called): 0 or absent is the default page, out of range is
	// invalid params.
	for body, want := range map[string]float64{`{}`: 0, `{"pageSize":0}`: 0, `{"pageSize":100}`: 0, `{"pageSize":-1}`: -32602, `{"pageSize":101}`: -32602, `{"historyLength":-1}`: -32602} {
		out := rawRPC(t, srv, "demo", "acme", "ListTasks", body)
		e, _ := out["error"].(map[string]any)
		code, _ := e["code"].(float64)
		if code != want {
			t.Fatalf("ListTasks %s: %v, want error code %v", body, out, want)
		}
		if res, _ := out["result"].(map[string]any); want == 0 && body != `{"pageSize":100}` && res["pageSize"] != float64(50) {
			t.Fatalf("ListTasks %s: page size %v, want the default 50", body, res["pageSize"])
		}
	}
}

// TestListTasksReadsBoundedPages: a page of tasks is filled from as many
// pages of the tenant's runs as it takes, each asking for what the page
// still lacks, but one call reads at most ten pages of runs: past runs
// the filter drops, it returns a short (here empty) page and a token to
// go on from.
func TestListTasksReadsBoundedPages(t *testing.T) {
	_, srv := server(t)
	ctx := context.Background()
	demo, other := client(t, srv, "demo", "acme"), client(t, srv, "other", "acme")
	send := func(c *a2aclient.Client, id string, turns ...any) a2a.TaskID {
		t.Helper()
		m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Hi."))
		m.ID = id
		if len(turns) > 0 {
			m = message(id, "Hi.", turns...).Message
		}
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // distinct creation times
		return res.(*a2a.Task).ID
	}
	done := map[string]any{"content": "Done."}
	old := send(demo, "b-1", done)
	mid := send(demo, "b-2", done)
	send(other, "b-3")
	newest := send(demo, "b-4", done)
	// Newest first: newest, other, mid, old. A page of 2 reads 2 runs
	// (newest, other), then the 1 it lacks (mid).
	p, err := demo.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 2})
	if err != nil || len(p.Tasks) != 2 || p.Tasks[0].ID != newest || p.Tasks[1].ID != mid || p.NextPageToken == "" {
		t.Fatalf("a page of 2: %+v, %v", p, err)
	}
	// Ten runs of another agent: a page of 1 reads them (ten reads) and
	// stops there, before newest.
	for i := range 10 {
		send(other, fmt.Sprintf("b-o%d", i))
	}
	p, err = demo.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 1})
	if err != nil || len(p.Tasks) != 0 || p.NextPageToken == "" {
		t.Fatalf("past 10 runs of another agent, a page of 1: %+v, %v; want an empty page and a token", p, err)
	}
	var got []a2a.TaskID
	for token, calls := p.NextPageToken, 0; token != ""; calls++ {
		if calls == 10 {
			t.Fatal("paging does not end")
		}
		p, err = demo.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 1, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range p.Tasks {
			got = append(got, task.ID)
		}
		token = p.NextPageToken
	}
	if len(got) != 3 || got[0] != newest || got[1] != mid || got[2] != old {
		t.Fatalf("the pages after: %v, want %v", got, []a2a.TaskID{newest, mid, old})
	}
}

// rawRPC posts one JSON-RPC call to agent's route for tenant and returns
// the decoded response.
func rawRPC(t *testing.T, srv *httptest.Server, agent, tenant, method, params string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/"+agent, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`))
	req.Header.Set("X-Tenant", tenant)
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}
