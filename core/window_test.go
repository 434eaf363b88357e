package core

import (
	"strings"
	"testing"
)

// TestModelViewInbox: the view is the transcript and then the inbox's
// messages, an inbox longer than the transcript included, and building
// it writes nothing into the transcript.
func TestModelViewInbox(t *testing.T) {
	transcript := make([]Message, 1, 4)
	transcript[0] = Message{Seq: 1, Role: RoleUser, Content: "plan a trip"}
	st := RunState{Inbox: []InboxMessage{{Content: "to Porto", Source: "steering"}, {Content: "by train", Source: "steering"}, {Content: "in May", Source: "steering"}}}
	view, trim := st.modelView(transcript)
	if trim != nil || len(view) != 4 {
		t.Fatalf("view of %d messages, trim %+v", len(view), trim)
	}
	for i, want := range []string{"plan a trip", "to Porto", "by train", "in May"} {
		if view[i].Role != RoleUser || view[i].Content != want {
			t.Fatalf("view[%d] = %+v, want the user's %q", i, view[i], want)
		}
	}
	if view[1].Metadata[MetaSource] != "steering" {
		t.Fatalf("an inbox message's source: %v", view[1].Metadata)
	}
	if spare := transcript[:2]; spare[1].Content != "" {
		t.Fatalf("the view wrote into the transcript's spare capacity: %+v", spare[1])
	}
}

// TestTrimWithoutABudget: a budget of 0 or less trims nothing.
func TestTrimWithoutABudget(t *testing.T) {
	msgs := []Message{{Role: RoleSystem, Content: "be brief"}}
	for i := range 6 {
		msgs = append(msgs, Message{Role: RoleUser, Content: strings.Repeat("x", 100*(i+1))}, Message{Role: RoleAssistant, Content: "ok"})
	}
	for _, budget := range []int{0, -1} {
		got, trim := TrimToContextWindow(msgs, budget, 10)
		if trim != nil || len(got) != len(msgs) {
			t.Errorf("budget %d: %d messages, trim %+v", budget, len(got), trim)
		}
	}
}
