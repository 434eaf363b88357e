package core

import (
	"context"
	"testing"
)

// TestPerformCompactsOnlyATrimmedView: Perform hands the context
// compactor the messages a trim dropped and the model sees its summary in
// place of the trim's; a view that was not trimmed goes to the model as
// it is, without asking the compactor.
func TestPerformCompactsOnlyATrimmedView(t *testing.T) {
	step := Step{Kind: StepModelTurn, RunID: "r-1", Seq: 1}
	dropped := []Message{{Role: RoleUser, Content: "old"}}
	for _, tc := range []struct {
		name string
		trim *TrimResult
		want string
	}{
		{"trimmed", &TrimResult{Dropped: dropped, SummaryIndex: 0}, "[Context summary: condensed]"},
		{"not trimmed", nil, "[Context summary: det]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked [][]Message
			var seen []Message
			io := IO{
				Compactor: compactorOf(func(d []Message) (string, error) { asked = append(asked, d); return " condensed ", nil }),
				Model: modelFunc(func(_ context.Context, r ModelRequest) (ModelReply, error) {
					seen = r.Messages
					return ModelReply{Content: "ok"}, nil
				}),
			}
			view := []Message{{Role: RoleUser, Content: "[Context summary: det]"}, {Role: RoleUser, Content: "now"}}
			in := io.Perform(context.Background(), step, Plan{Kind: PlanModel, Model: &ModelRequest{RunID: "r-1", Messages: view, Trim: tc.trim}})
			if r, ok := in.(ModelReplied); !ok || r.Err != nil {
				t.Fatalf("input %#v", in)
			}
			if len(seen) != 2 || seen[0].Content != tc.want || seen[1].Content != "now" {
				t.Fatalf("the model saw %+v, want %q first", seen, tc.want)
			}
			if tc.trim == nil && len(asked) != 0 || tc.trim != nil && (len(asked) != 1 || len(asked[0]) != 1 || asked[0][0].Content != "old") {
				t.Fatalf("the compactor was asked %+v", asked)
			}
			if view[0].Content != "[Context summary: det]" {
				t.Fatal("the plan's view was changed")
			}
		})
	}
}

type compactorOf func([]Message) (string, error)

func (f compactorOf) CompactContext(_ context.Context, d []Message) (string, error) { return f(d) }

// TestPerformExecutesATool: Perform runs a tool plan's call with the
// executor and hands its output over as the step's ToolExecuted.
func TestPerformExecutesATool(t *testing.T) {
	step := Step{Kind: StepToolCall, RunID: "r-1", Seq: 2, CallID: "c1"}
	io := IO{Tools: ToolExecutorFunc(func(_ context.Context, c ToolCall) (any, error) { return "ran " + c.ToolCallID, nil })}
	in := io.Perform(context.Background(), step, Plan{Kind: PlanTool, Tool: &ToolCall{RunID: "r-1", ToolCallID: "c1", ToolName: "ability/search"}})
	if r, ok := in.(ToolExecuted); !ok || r.Err != nil || r.Output != "ran c1" || r.Step != step {
		t.Fatalf("input %#v", in)
	}
}
