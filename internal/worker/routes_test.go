package worker

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
)

func TestRoutedMessagesGoToTheirHandler(t *testing.T) {
	var got []core.Step
	var attempts []durable.Attempt
	fail := false
	w := &Worker{Log: slog.New(slog.DiscardHandler), Routes: map[core.StepKind]func(context.Context, core.Step, durable.Attempt) error{
		core.StepMemoryExtract: func(_ context.Context, s core.Step, d durable.Attempt) error {
			got, attempts = append(got, s), append(attempts, d)
			if fail {
				return errors.New("try again")
			}
			return nil
		},
	}}
	msg := events.SQSMessage{MessageId: "m-1", Body: `{"kind":"memory_extract","v":1,"run_id":"r-1","seq":0}`,
		Attributes: map[string]string{"ApproximateReceiveCount": "2", "MessageGroupId": "memory:r-1"}}
	resp, err := w.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%v %+v", err, resp)
	}
	if len(got) != 1 || got[0].RunID != "r-1" || attempts[0].ReceiveCount != 2 || attempts[0].Chain != nil {
		t.Fatalf("routed %+v %+v", got, attempts)
	}
	fail = true
	resp, _ = w.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "m-1" {
		t.Fatalf("a failed routed message is not retried: %+v", resp)
	}
}
