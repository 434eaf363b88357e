package main

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
)

// fakeStore answers the calls of a chained invocation (no other call is
// made: the embedded nil Store would panic).
type fakeStore struct{ durable.Store }

func (fakeStore) LoadRun(context.Context, string) (core.RunRecord, error) {
	return core.RunRecord{State: core.RunState{RunID: "r1"}}, nil
}
func (fakeStore) Commit(context.Context, core.Write) error { return nil }
func (fakeStore) ClaimIntent(context.Context, string, string, string, time.Time, time.Duration) (core.Claim, error) {
	return core.Claim{}, nil
}

// fakeQueue takes sends, receives and deletes.
type fakeQueue struct {
	core.StepQueue
	core.StepReceiver
}

func (fakeQueue) Enqueue(context.Context, []core.QueuedStep) error { return nil }
func (fakeQueue) Receive(context.Context, int, time.Duration) ([]core.ReceivedMessage, error) {
	return []core.ReceivedMessage{{MessageID: "m"}}, nil
}
func (fakeQueue) Delete(context.Context, string) error { return nil }

// TestChainedInvocationSplit plays one worker invocation that runs three
// steps — its message's model turn (queued), then a tool call and a
// model turn continued in the same invocation (chained), the last of
// which hands the run off with a send — through both counters (the AWS
// middleware of the emulator runs, the counted ports of the in-memory
// runtime), and checks that each step gets its own requests, kind and
// delivery, that the receive, the delete and the invocation are counted
// once, on the first, and that each step is at its minimum: a chained
// step reads nothing and only the one that hands off sends.
func TestChainedInvocationSplit(t *testing.T) {
	claim := recordedCall{"dynamodb", "UpdateItem", &dynamodb.UpdateItemInput{TableName: aws.String("t"),
		Key: map[string]types.AttributeValue{"PK": s("RUN#cc1"), "SK": s("INT#c1")}}, &dynamodb.UpdateItemOutput{ConsumedCapacity: capOut(1)}}
	// A commit that holds the next step for its invocation records the
	// lease and takes the step out of Next (core.Output.Hold).
	next := func(kind core.StepKind) core.Output {
		st := core.RunState{RunID: "r1", Status: core.StatusRunning, StepSeq: 2}
		step := core.Step{RunID: "r1", Kind: kind, Seq: 2, Format: core.StepFormat}
		if kind == core.StepModelTurn {
			st.ModelStep = 2
		} else {
			step.CallID = "c1"
			st.Calls = []core.CallState{{ID: "c1", Status: core.CallPending, StepSeq: 2}}
		}
		out := core.Output{State: st, Next: []core.Step{step}}
		if !out.Hold(out.Next[0]) {
			t.Fatal("the step was not held")
		}
		return out
	}
	// The invocation's steps: what each does, on either runtime.
	type stepCalls struct {
		aws    []recordedCall
		memory func(ctx context.Context, st *observedStore, q countedQueue)
		out    core.Output
	}
	steps := []stepCalls{
		{[]recordedCall{stateQuery(1), commit("due#1", "running", 300)}, func(ctx context.Context, st *observedStore, _ countedQueue) {
			_, _ = st.LoadRun(ctx, "r1")
			_ = st.Commit(ctx, core.Write{Output: next(core.StepToolCall)})
		}, next(core.StepToolCall)},
		{[]recordedCall{claim, commit("due#1", "running", 300)}, func(ctx context.Context, st *observedStore, _ countedQueue) {
			_, _ = st.ClaimIntent(ctx, "r1", "c1", "o", time.Now(), time.Minute)
			_ = st.Commit(ctx, core.Write{Output: next(core.StepModelTurn)})
		}, next(core.StepModelTurn)},
		{[]recordedCall{commit("due#1", "running", 300), send()}, func(ctx context.Context, st *observedStore, q countedQueue) {
			_ = st.Commit(ctx, core.Write{Output: next(core.StepToolCall)})
			_ = q.Enqueue(ctx, nil)
		}, next(core.StepToolCall)},
	}
	for _, via := range []string{rtEmulators, rtMemory} {
		t.Run(via, func(t *testing.T) {
			sp, esm := newSplitter(), newRecorder()
			ctx := withRecorder(context.Background(), sp)
			ectx := withRecorder(context.Background(), esm)
			st, q := &observedStore{Store: fakeStore{}, count: true, sizes: true}, countedQueue{inner: fakeQueue{}, sizes: true}
			t0, c0 := time.Now(), cpuNow()
			if via == rtEmulators {
				play(t, ectx, recordedCall{"sqs", "ReceiveMessage", &sqs.ReceiveMessageInput{}, &sqs.ReceiveMessageOutput{}})
			} else {
				_, _ = q.Receive(ectx, 1, 0)
			}
			for _, step := range steps {
				if via == rtMemory {
					step.memory(ctx, st, q)
					continue
				}
				for _, c := range step.aws {
					play(t, ctx, c)
					if _, ok := c.in.(*dynamodb.TransactWriteItemsInput); ok {
						// observedStore.Commit notes the output once the
						// transaction returned.
						recorderFrom(ctx).setCommitted(step.out)
					}
				}
			}
			if via == rtEmulators {
				play(t, ectx, recordedCall{"sqs", "DeleteMessage", &sqs.DeleteMessageInput{}, &sqs.DeleteMessageOutput{}})
			} else {
				_ = q.Delete(ectx, "h")
			}
			if n := len(sp.parts); n != 3 {
				t.Errorf("the invocation was split into %d parts, want 3 (a send stays with the step it ends)", n)
			}
			got := invocationSamples([]core.Step{{RunID: "r1", Kind: core.StepModelTurn}}, func(int) bool { return false }, invocation{t0, time.Now(), c0, cpuNow()}, sp, esm)
			want := []struct {
				kind, delivery string
				handsOff       bool
				ops            map[string]int
			}{
				{string(core.StepModelTurn), deliveryQueued, false, map[string]int{opStateRead: 1, opCommit: 1}},
				{string(core.StepToolCall), deliveryChained, false, map[string]int{opIntentClaim: 1, opCommit: 1}},
				{string(core.StepModelTurn), deliveryChained, true, map[string]int{opCommit: 1, opEnqueue: 1}},
			}
			if len(got) != len(want) {
				t.Fatalf("%d samples, want %d: %+v", len(got), len(want), got)
			}
			for i, w := range want {
				g := got[i]
				if g.Kind != w.kind || g.Delivery != w.delivery || g.HandsOff != w.handsOff {
					t.Errorf("step %d: %s %s hands off %v, want %s %s %v", i, g.Kind, g.Delivery, g.HandsOff, w.kind, w.delivery, w.handsOff)
				}
				calls := map[string]int{}
				for op, o := range g.Ops {
					calls[op] = o.Calls
				}
				if !sameCounts(calls, w.ops) {
					t.Errorf("step %d (%s): requests %v, want %v", i, w.kind, calls, w.ops)
				}
				if min := minOps(g.Kind, g.Class, g.Delivery, g.HandsOff); !sameCounts(min, w.ops) {
					t.Errorf("step %d (%s): minimum %v, want %v (the step's requests)", i, w.kind, min, w.ops)
				}
				if wantInv := map[bool]int{true: 1}[i == 0]; g.Invocations != wantInv || (len(g.ESM) > 0) != (i == 0) {
					t.Errorf("step %d: %d invocations and receive/delete %v; want them on the first step only", i, g.Invocations, g.ESM)
				}
				if g.Wall <= 0 {
					t.Errorf("step %d: wall %v", i, g.Wall)
				}
			}
			c := projectCost(caseResult{}, got)
			if c.Invocations != 1.0/3 || c.SQSRequests != 1 || c.Chained != 2.0/3 {
				t.Errorf("per step: %.3f invocations, %.3f SQS requests, %.3f chained; want 1/3, 1 (send, receive, delete over 3 steps), 2/3", c.Invocations, c.SQSRequests, c.Chained)
			}
		})
	}
}

func sameCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestScalingSteadyCPU makes sure the scaling table takes the steady
// steps' CPU from the row that holds most of them, chained or queued,
// never from a first or final step.
func TestScalingSteadyCPU(t *testing.T) {
	row := func(kind, class, delivery string, steps int, cpu float64) kindResult {
		return kindResult{Kind: kindName(kind, class, delivery), Steps: steps, CPUMS: dist{P50: cpu}}
	}
	mt, tc := string(core.StepModelTurn), string(core.StepToolCall)
	c := caseResult{Runtime: rtMemory, Workload: workload{Turns: 20, ResultBytes: 100}, ByKind: []kindResult{
		row(mt, classFirst, deliveryQueued, 1, 9), row(mt, classSteady, deliveryQueued, 1, 7), row(mt, classSteady, deliveryChained, 18, 2),
		row(tc, classSteady, deliveryQueued, 19, 3), row(tc, classSteady, deliveryChained, 1, 8), row(mt, classFinal, deliveryChained, 1, 9),
	}}
	rows, _ := scaling([]caseResult{c})
	if len(rows) != 1 || rows[0].ModelCPU != 2 || rows[0].ToolCPU != 3 {
		t.Fatalf("scaling rows %+v; want model turn CPU 2 (chained) and tool call CPU 3 (queued)", rows)
	}
}
