package a2atool_test

import (
	"context"
	"iter"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/a2atool"
	"github.com/baton-agents/baton/internal/toolspec"
)

// slowToTakeAnswers asks a question; given the answer, it first adds a
// data artifact (holding the data it was sent first and the answer) to
// the task, whose status still shows the question, as the JavaScript
// SDK's server first shows the task as it was, and completes 200 ms
// later.
type slowToTakeAnswers struct{ first any }

func (a *slowToTakeAnswers) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if ec.StoredTask == nil {
			a.first = ec.Message.Parts[0].Data()
			q := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("Which city?"))
			if yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
				yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, q), nil)
			}
			return
		}
		if !yield(a2a.NewArtifactEvent(ec, a2a.NewDataPart(map[string]any{"first": a.first, "city": ec.Message.Parts[0].Text()})), nil) {
			return
		}
		time.Sleep(200 * time.Millisecond)
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
	}
}

func (a *slowToTakeAnswers) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(func(a2a.Event, error) bool) {}
}

// TestAnsweredQuestionIsNotAskedAgain: declared parameters go as one
// data part; a task that still shows the question it was answered is
// followed, not asked again (RemoteTask.Asked); a lone data artifact is
// the result as JSON.
func TestAnsweredQuestionIsNotAskedAgain(t *testing.T) {
	agent := &slowToTakeAnswers{}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	card := &a2a.AgentCard{Name: "asker", Version: "1", SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(srv.URL+"/rpc", a2a.TransportProtocolJSONRPC)}}
	mux.Handle("/card.json", a2asrv.NewStaticAgentCardHandler(card))
	mux.Handle("/rpc", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(agent)))
	x, err := a2atool.New("a2a/asker", toolspec.Executor{Type: "a2a", CardURL: srv.URL + "/card.json", Timeout: "2s"}, a2atool.Options{Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}
	call := core.ToolCall{RunID: "r-1", ToolCallID: "c1", ToolName: "a2a/asker", Parameters: map[string]any{"n": 3}, Declaration: core.ToolDeclaration{Parameters: params}}
	out, err := x.Execute(t.Context(), call)
	p, ok := out.(*core.RemotePending)
	if err != nil || !ok || p.Question["question"] != "Which city?" || p.Asked == "" {
		t.Fatalf("first call: %#v %v, want the question", out, err)
	}
	call.Remote = &core.RemoteTask{TaskID: p.TaskID, ContextID: p.ContextID, Asked: p.Asked, Reply: &core.RemoteReply{MessageID: "m-2", Result: "Paris"}}
	out, err = x.Execute(t.Context(), call)
	res, ok := out.(map[string]any)
	if err != nil || !ok || res["success"] != true {
		t.Fatalf("after the answer: %#v %v, want the completed task", out, err)
	}
	got, _ := core.CanonicalJSON(res["result"])
	if string(got) != `{"city":"Paris","first":{"n":3}}` {
		t.Fatalf("result %s", got)
	}
}
