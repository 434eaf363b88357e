package a2aserver_test

import (
	"context"
	"errors"
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

	h := 1
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

	for _, size := range []int{-1, 101} {
		if _, err := demo.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: size}); !errors.Is(err, a2a.ErrInvalidParams) {
			t.Fatalf("pageSize %d: %v, want invalid params", size, err)
		}
	}
}
