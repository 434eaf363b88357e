package a2aserver

import (
	"testing"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
)

// TestHistoryLeavesOutRecalledMemories: a task's history is the
// conversation, not the memories recalled into the model's context.
func TestHistoryLeavesOutRecalledMemories(t *testing.T) {
	v := durable.View{RunID: "r-1", SessionID: "s-1"}
	v.Result.Messages = []core.Message{
		{Role: core.RoleUser, Content: "Plan my trip."},
		{Role: core.RoleUser, Content: "<memories>…</memories>", Metadata: map[string]any{core.MetaSource: core.MessagesMemory}},
		{Role: core.RoleAssistant, Content: "Done."},
	}
	h := historyOf(v, nil)
	if len(h) != 2 || h[0].Parts[0].Text() != "Plan my trip." || h[1].Parts[0].Text() != "Done." {
		t.Fatalf("history %+v", h)
	}
}
