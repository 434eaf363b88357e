package core

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// ToolsDiscovered adds new tools through the run's visibility policy,
// reports a source once, and is nothing to apply when nothing is new;
// the caller's state is never changed.
func TestToolsDiscovered(t *testing.T) {
	ctx := context.Background()
	m := NewMachine(&FixedClock{T: t0})
	out, err := m.Start(ctx, StartInput{RunID: "r-1", SessionID: "s-1", Messages: user("hi"),
		Config: RunConfig{Model: scripted(turn("done")), Policy: PolicyConfig{Deny: []string{"mcp/crm/delete"}}}})
	if err != nil {
		t.Fatal(err)
	}
	decl := func(name string) ToolDeclaration {
		d, err := NormalizeServerTool(map[string]any{"name": name, "source": "crm", "description": "x", "categories": []any{"mcp"}})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	st := out.State
	before, _ := MarshalState(st)
	in := ToolsDiscovered{Tools: []ToolDeclaration{decl("mcp/crm/Get.Customer"), decl("mcp/crm/delete"), decl("mcp/crm/Get.Customer")},
		Unavailable: []ToolSourceFailure{{Source: "mcp/down", Error: "connection refused"}}}
	got, err := m.Apply(ctx, st, nil, in)
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := MarshalState(st); string(before) != string(after) {
		t.Fatal("Apply changed the caller's state")
	}
	ns := got.State
	if len(ns.Config.Tools) != 2 || !slices.Equal(ns.Config.Visible, []string{"mcp/crm/Get.Customer"}) || !slices.Equal(ns.ToolSourcesDown, []string{"mcp/down"}) {
		t.Fatalf("tools %v visible %v down %v", ns.Config.Tools, ns.Config.Visible, ns.ToolSourcesDown)
	}
	var types []string
	for _, e := range got.Events {
		types = append(types, e.Type)
		if e.Type == EventToolsDiscovered {
			if h := e.Fields()["hidden"].([]any); len(h) != 1 || h[0].(map[string]any)["reason"] != "denied" {
				t.Errorf("hidden %v", h)
			}
		}
	}
	if !slices.Equal(types, []string{EventToolsDiscovered, EventToolSourceUnavailable}) {
		t.Fatalf("events %v", types)
	}
	if _, err := m.Apply(ctx, ns, nil, in); !errors.Is(err, ErrNothingToApply) {
		t.Fatalf("again: %v, want ErrNothingToApply", err)
	}
}
