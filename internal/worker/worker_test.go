package worker

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/executors"
	"github.com/baton-agents/baton/internal/memstore"
)

// flakyStore fails LoadRun for one run, as a transient store error.
type flakyStore struct {
	*memstore.Store
	fail string
}

func (f flakyStore) LoadRun(ctx context.Context, id string) (core.RunRecord, error) {
	if id == f.fail {
		return core.RunRecord{}, core.Retryable(context.DeadlineExceeded)
	}
	return f.Store.LoadRun(ctx, id)
}

func TestBatchFailuresKeepGroupOrder(t *testing.T) {
	reg, err := agents.Parse([]byte(`{"agents":[{"slug":"a","model":{"provider":"scripted"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	router, _ := executors.NewRouter(reg, executors.NewGoRegistry(), nil)
	s := memstore.New()
	clock := &core.FixedClock{T: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	q := memstore.NewStepQueue(time.Minute, 5, nil)
	eng := durable.New(durable.Options{Store: flakyStore{s, "r-bad"}, Queue: q, Agents: reg, Model: core.ScriptedModel{}, Tools: router, Clock: clock, IDs: &core.SequentialIDs{}})
	w := &Worker{Runner: eng, Log: eng.Log}
	step := func(run string, seq int64) string {
		b, _ := json.Marshal(core.Step{Kind: core.StepModelTurn, Format: core.StepFormat, RunID: run, Seq: seq})
		return string(b)
	}
	ev := events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "m1", Body: step("r-bad", 1), Attributes: map[string]string{"MessageGroupId": "g1", "ApproximateReceiveCount": "1"}},
		{MessageId: "m2", Body: step("r-unknown", 1), Attributes: map[string]string{"MessageGroupId": "g1"}},
		{MessageId: "m3", Body: step("r-unknown", 2), Attributes: map[string]string{"MessageGroupId": "g2"}},
		{MessageId: "m4", Body: `{"not":"a step"}`, Attributes: map[string]string{"MessageGroupId": "g3"}},
	}}
	resp, err := w.Handle(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	// m1 failed (retryable); m2 shares its group, so it is reported
	// unprocessed; m3 (unknown run) and m4 (not a step) are acknowledged.
	if len(failed) != 2 || failed[0] != "m1" || failed[1] != "m2" {
		t.Fatalf("failures = %v", failed)
	}
}
