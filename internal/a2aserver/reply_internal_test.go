package a2aserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/runspec"
)

// TestReadReply: what a message on a task says (its text, one decision
// for every pending approval, decisions by action, client tool results),
// and the answers refused with invalid params, each naming what is wrong.
func TestReadReply(t *testing.T) {
	yes := true
	data := func(v map[string]any) *a2a.Part { return a2a.NewDataPart(v) }
	text := a2a.NewTextPart
	cases := []struct {
		name  string
		parts a2a.ContentParts
		want  reply
		err   string // a part of the invalid-params message; "" when read
	}{
		{name: "text", parts: a2a.ContentParts{text("go on"), text("faster")}, want: reply{text: "go on\n\nfaster"}},
		{name: "one decision for all", parts: a2a.ContentParts{data(map[string]any{"decision": "reject", "reason": "no"})},
			want: reply{all: &decision{Decision: "reject", Reason: "no"}}},
		{name: "decisions by action", parts: a2a.ContentParts{data(map[string]any{"decisions": []any{
			map[string]any{"action_id": "a1", "decision": "accept"}, map[string]any{"action_id": "a2", "decision": "reject", "reason": "r"}}})},
			want: reply{decisions: []decision{{ActionID: "a1", Decision: "accept"}, {ActionID: "a2", Decision: "reject", Reason: "r"}}}},
		{name: "tool results and text", parts: a2a.ContentParts{text("here"), data(map[string]any{"tool_results": []any{
			map[string]any{"request_id": "q1", "success": true, "result": "42"}}})},
			want: reply{results: []toolResult{{RequestID: "q1", Success: &yes, Result: "42"}}, text: "here"}},
		{name: "data parts add up", parts: a2a.ContentParts{
			data(map[string]any{"decisions": []any{map[string]any{"action_id": "a1", "decision": "accept"}}}),
			data(map[string]any{"decisions": []any{map[string]any{"action_id": "a2", "decision": "accept"}}})},
			want: reply{decisions: []decision{{ActionID: "a1", Decision: "accept"}, {ActionID: "a2", Decision: "accept"}}}},
		{name: "an unknown field", parts: a2a.ContentParts{data(map[string]any{"approve": true})},
			err: `message.parts[0].data: unknown field "approve"`},
		{name: "a decision neither accept nor reject", parts: a2a.ContentParts{data(map[string]any{"decision": "maybe"})},
			err: `decision 0: want "accept" or "reject", got "maybe"`},
		{name: "a decision by action neither accept nor reject", parts: a2a.ContentParts{data(map[string]any{"decisions": []any{
			map[string]any{"action_id": "a1", "decision": "accept"}, map[string]any{"action_id": "a2", "decision": "yes"}}})},
			err: `decision 1: want "accept" or "reject", got "yes"`},
		{name: "a decision without its action", parts: a2a.ContentParts{data(map[string]any{"decisions": []any{
			map[string]any{"action_id": "a1", "decision": "accept"}, map[string]any{"decision": "accept"}}})},
			err: "decisions[1].action_id is required"},
		{name: "a result without its request", parts: a2a.ContentParts{data(map[string]any{"tool_results": []any{
			map[string]any{"success": true}}})},
			err: "tool_results[0]: request_id and success are required"},
		{name: "a result without success", parts: a2a.ContentParts{data(map[string]any{"tool_results": []any{
			map[string]any{"request_id": "q1", "success": true}, map[string]any{"request_id": "q2"}}})},
			err: "tool_results[1]: request_id and success are required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readReply(tc.parts)
			if tc.err != "" {
				if !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want invalid params saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g, w := fmt.Sprintf("%+v %+v %q", deref(got.all), got.decisions, got.text), fmt.Sprintf("%+v %+v %q", deref(tc.want.all), tc.want.decisions, tc.want.text); g != w {
				t.Fatalf("reply %s, want %s", g, w)
			}
			if len(got.results) != len(tc.want.results) {
				t.Fatalf("results %+v, want %+v", got.results, tc.want.results)
			}
			for i, r := range got.results {
				w := tc.want.results[i]
				if r.RequestID != w.RequestID || *r.Success != *w.Success || r.Result != w.Result || r.Error != w.Error {
					t.Fatalf("result %d: %+v, want %+v", i, r, w)
				}
			}
		})
	}
}

func deref(d *decision) any {
	if d == nil {
		return nil
	}
	return *d
}

// TestRPCError: the A2A error of a runner, core or runspec error; an
// A2A error passes as it is; an internal error's text stays in the log.
func TestRPCError(t *testing.T) {
	own := a2a.NewError(a2a.ErrUnsupportedOperation, "as it is")
	cases := []struct {
		name string
		err  error
		want error  // the A2A error it is
		code string // details.code; "" for none
		msg  string // the message, "" for any
	}{
		{"an A2A error", own, a2a.ErrUnsupportedOperation, "", "as it is"},
		{"a bare task not found", a2a.ErrTaskNotFound, a2a.ErrTaskNotFound, "", ""},
		{"a bare invalid params", fmt.Errorf("x: %w", a2a.ErrInvalidParams), a2a.ErrInvalidParams, "", ""},
		{"not found", core.ErrNotFound, a2a.ErrTaskNotFound, "", "task not found"},
		{"a conflict", durable.ErrSessionBusy, a2a.ErrUnsupportedOperation, "transcript_lock_contention", ""},
		{"too many requests", &core.TooManyActiveError{Tenant: "acme", Limit: 3}, a2a.ErrServerError, "too_many_active_runs", ""},
		{"a bad request", runspec.Errorf(400, "invalid_request", "no good"), a2a.ErrInvalidParams, "invalid_request", "no good"},
		{"forbidden", runspec.Errorf(403, "forbidden", "not yours"), a2a.ErrInvalidParams, "forbidden", "not yours"},
		{"the last status under 500", runspec.Errorf(499, "closed", "gone"), a2a.ErrInvalidParams, "closed", "gone"},
		{"internal", errors.New("disk on fire"), a2a.ErrInternalError, "", "internal error"},
		{"a runspec 500", runspec.Errorf(500, "internal", "secret detail"), a2a.ErrInternalError, "", "internal error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Handler{}.rpcError(context.Background(), tc.err)
			if !errors.Is(got, tc.want) {
				t.Fatalf("%v, want %v", got, tc.want)
			}
			var ae *a2a.Error
			if !errors.As(got, &ae) {
				if tc.code != "" || tc.msg != "" {
					t.Fatalf("%v: not an *a2a.Error", got)
				}
				return
			}
			if code, _ := ae.Details["code"].(string); code != tc.code {
				t.Fatalf("details %v, want code %q", ae.Details, tc.code)
			}
			if tc.msg != "" && ae.Message != tc.msg {
				t.Fatalf("message %q, want %q", ae.Message, tc.msg)
			}
		})
	}
}

// TestSinkEvent: a progress event is a working status update, with the
// status event's message as its message when it has one; other events
// are not sent.
func TestSinkEvent(t *testing.T) {
	var got []a2a.Event
	s := &sink{yield: func(ev a2a.Event, _ error) bool { got = append(got, ev); return true }, runID: "r-1", sessionID: "s-1"}
	for _, ev := range []core.Event{
		{Type: core.EventStatus, Seq: 3, Data: &core.StatusData{Message: "Searching."}},
		{Type: core.EventStatus, Seq: 4, Data: &core.StatusData{}},
		{Type: core.EventToolCall, Seq: 5},
		{Type: core.EventCompleted, Seq: 6},
	} {
		if err := s.Event(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 3 {
		t.Fatalf("%d events sent, want 3", len(got))
	}
	first, second := got[0].(*a2a.TaskStatusUpdateEvent), got[1].(*a2a.TaskStatusUpdateEvent)
	if first.Status.State != a2a.TaskStateWorking || first.Status.Message == nil || first.Status.Message.Parts[0].Text() != "Searching." {
		t.Fatalf("a status with a message: %+v", first.Status)
	}
	if second.Status.Message != nil {
		t.Fatalf("a status without a message: %+v", second.Status.Message)
	}
}

// TestAnswerArtifact: an answer is a text part, and a data part too when
// it is a JSON object or array.
func TestAnswerArtifact(t *testing.T) {
	for content, data := range map[string]bool{`Plain.`: false, ` {"a": 1}`: true, `[1, 2]`: true, `{not json`: false, `"a string"`: false} {
		a := answer(content)
		if a.ID != AnswerArtifact || a.Parts[0].Text() != content || (len(a.Parts) == 2) != data {
			t.Errorf("answer %q: %+v", content, a.Parts)
		}
	}
}
