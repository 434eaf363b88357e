package agui

import (
	"context"
	"strings"
	"testing"

	"github.com/baton-agents/baton/core"
)

// TestDeltasBeforeTheTurnIsCommitted: a turn's deltas stream before its
// turn_started event, which is committed with the reply; the text is sent
// once, in one message inside the turn's one step, and deltas of a turn
// already replied (a retried call streaming again) are dropped.
func TestDeltasBeforeTheTurnIsCommitted(t *testing.T) {
	ctx := context.Background()
	tr := &Translator{RunID: "r-1", Load: func(context.Context, int64, int64) ([]core.Message, error) {
		return []core.Message{{Seq: 2, Role: core.RoleAssistant, Content: "Hello there."}}, nil
	}}
	var got []Event
	batch := func(attempt int64, texts ...string) core.DeltaBatch {
		b := core.DeltaBatch{RunID: "r-1", Pos: core.DeltaPos{Turn: 1, Attempt: attempt}}
		for _, s := range texts {
			b.Deltas = append(b.Deltas, core.TokenDelta{Kind: core.DeltaToken, Text: s})
		}
		return b
	}
	got = append(got, tr.Deltas(batch(1, "Hello", " there."))...)
	for _, ev := range []core.Event{
		{Seq: 2, Type: core.EventTurnStarted, Turn: 1},
		{Seq: 3, Type: core.EventMessagesUpdated, Turn: 1, Data: core.Fields{"reason": core.MessagesModelReply, "from_seq": 2, "to_seq": 2}},
	} {
		out, err := tr.Event(ctx, ev)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, out...)
	}
	got = append(got, tr.Deltas(batch(2, "Hello again"))...)
	var types, text []string
	for _, e := range got {
		types = append(types, e.Type)
		if e.Type == "TEXT_MESSAGE_CONTENT" {
			text = append(text, e.Delta)
		}
	}
	want := "STEP_STARTED TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END STEP_FINISHED"
	if strings.Join(types, " ") != want || strings.Join(text, "") != "Hello there." {
		t.Fatalf("events %v (text %q), want %s", types, text, want)
	}
}
