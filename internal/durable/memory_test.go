package durable_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/durable"
)

const memoryAgentsFile = `{"agents":[{"slug":"demo","model":{"provider":"scripted"},"allow_overrides":["model","memory_subject"],
  "memory":{"tools":true,"extraction":{"enabled":true},"recall":{"top_k":3}}}]}`

// fakeMemory recalls its memories and extracts what it is told,
// recording the requests.
type fakeMemory struct {
	recalled  []core.RecalledMemory
	recalls   []core.RecallRequest
	extracts  []core.ExtractRequest
	extractFn func(core.ExtractRequest) (core.MemoryWritten, error)
}

func (f *fakeMemory) Recall(_ context.Context, req core.RecallRequest) ([]core.RecalledMemory, error) {
	f.recalls = append(f.recalls, req)
	return f.recalled, nil
}

func (f *fakeMemory) Extract(_ context.Context, req core.ExtractRequest) (core.MemoryWritten, error) {
	f.extracts = append(f.extracts, req)
	if f.extractFn != nil {
		return f.extractFn(req)
	}
	return core.MemoryWritten{Added: []string{"mem-1"}}, nil
}

func newMemoryHarness(t *testing.T, mem *fakeMemory) *harness {
	t.Helper()
	h := newHarnessWith(t, memoryAgentsFile, nil)
	h.opts.Memory = mem
	h.opts.Limits.MaxReceives = 3
	h.eng = durable.New(h.opts)
	return h
}

// pumpAll delivers every queued message as the worker routes it: a
// memory extraction to ExtractMemories, a step to HandleStep; it
// returns the kinds delivered.
func (h *harness) pumpAll(t *testing.T) []core.StepKind {
	t.Helper()
	var kinds []core.StepKind
	err := h.q.Drain(context.Background(), 1000, func(step core.Step, m core.ReceivedMessage) error {
		kinds = append(kinds, step.Kind)
		d := durable.Attempt{ReceiveCount: m.ReceiveCount, Owner: m.ReceiptHandle}
		if step.Kind == core.StepMemoryExtract {
			return h.eng.ExtractMemories(context.Background(), step, d)
		}
		return h.eng.HandleStep(context.Background(), step, d)
	})
	if err != nil {
		t.Fatal(err)
	}
	return kinds
}

func memoryEvents(t *testing.T, h *harness, runID, typ string) []core.Event {
	t.Helper()
	evs, err := h.store.Events(context.Background(), runID, 0, 1<<40, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []core.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func startAs(t *testing.T, h *harness, actor string, scopes []string, subject *string) (string, error) {
	t.Helper()
	rec, err := h.eng.Start(context.Background(), "acme", durable.StartRequest{Agent: "demo", SessionID: "s-" + actor, Messages: userMsg("I prefer green tea."),
		Principal: &core.Principal{ActorID: actor, Tenant: "acme", CapabilityCeiling: scopes},
		Overrides: agents.Overrides{Model: scripted(turn("Noted.")), MemorySubject: subject}})
	return rec.State.RunID, err
}

func TestMemoryRecallAndExtractionOfARun(t *testing.T) {
	mem := &fakeMemory{recalled: []core.RecalledMemory{{ID: "mem-0", Text: "Lives in Lyon."}}}
	h := newMemoryHarness(t, mem)
	id, err := startAs(t, h, "alice", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	kinds := h.pumpAll(t)
	if fmt.Sprint(kinds) != "[model_turn model_turn memory_extract]" {
		t.Fatalf("delivered %v, want the recall, the turn (not chained here), then the extraction", kinds)
	}
	if len(mem.recalls) != 1 || mem.recalls[0].Scope != (core.MemoryScope{Tenant: "acme", Subject: "alice"}) {
		t.Fatalf("recalls %+v", mem.recalls)
	}
	if len(mem.extracts) != 1 {
		t.Fatalf("extractions %d", len(mem.extracts))
	}
	x := mem.extracts[0]
	if x.Scope != (core.MemoryScope{Tenant: "acme", Subject: "alice"}) || x.RunID != id || x.Since.IsZero() || x.Agent != "demo" {
		t.Fatalf("extract request %+v", x)
	}
	var roles []string
	for _, m := range x.Messages {
		roles = append(roles, m.Role)
		if m.Metadata[core.MetaSource] == core.MessagesMemory {
			t.Fatal("the recalled memories are extracted again")
		}
	}
	if strings.Join(roles, ",") != "user,assistant" {
		t.Fatalf("extracted messages %v", roles)
	}
	if evs := memoryEvents(t, h, id, core.EventMemoryWritten); len(evs) != 1 || !strings.Contains(fmt.Sprint(evs[0].Fields()), "mem-1") {
		t.Fatalf("memory_written %+v", evs)
	}
	if evs := memoryEvents(t, h, id, core.EventMemoryRecalled); len(evs) != 1 {
		t.Fatalf("memory_recalled %+v", evs)
	}
	// A second delivery of the extraction writes nothing and records
	// nothing more.
	if err := h.eng.ExtractMemories(context.Background(), core.Step{Kind: core.StepMemoryExtract, Format: core.StepFormat, RunID: id}, durable.Attempt{ReceiveCount: 1}); err != nil {
		t.Fatal(err)
	}
	if len(mem.extracts) != 1 || len(memoryEvents(t, h, id, core.EventMemoryWritten)) != 1 {
		t.Fatalf("second delivery: %d extractions, %d events", len(mem.extracts), len(memoryEvents(t, h, id, core.EventMemoryWritten)))
	}
}

func TestMemoryExtractionRetriesThenRecordsItsFailure(t *testing.T) {
	mem := &fakeMemory{extractFn: func(core.ExtractRequest) (core.MemoryWritten, error) {
		return core.MemoryWritten{}, errors.New("model down")
	}}
	h := newMemoryHarness(t, mem)
	id, err := startAs(t, h, "alice", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.pump(t) // the run's steps; the extraction message stays queued
	step := core.Step{Kind: core.StepMemoryExtract, Format: core.StepFormat, RunID: id}
	for n := 1; n < 3; n++ {
		if err := h.eng.ExtractMemories(context.Background(), step, durable.Attempt{ReceiveCount: n}); err == nil {
			t.Fatalf("receive %d: no error to retry", n)
		}
	}
	if err := h.eng.ExtractMemories(context.Background(), step, durable.Attempt{ReceiveCount: 3}); err != nil {
		t.Fatal(err)
	}
	evs := memoryEvents(t, h, id, core.EventMemoryWritten)
	if len(evs) != 1 || evs[0].Fields()["error"] != "model down" {
		t.Fatalf("memory_written %+v", evs)
	}
}

func TestMemorySubjectOfARun(t *testing.T) {
	h := newMemoryHarness(t, &fakeMemory{})
	bob := "bob"
	if _, err := startAs(t, h, "alice", []string{"runs:write"}, &bob); !errors.Is(err, durable.ErrMemorySubject) {
		t.Fatalf("another subject without memories:subject: %v", err)
	}
	alice := "alice"
	if _, err := startAs(t, h, "alice", []string{"runs:write"}, &alice); err != nil {
		t.Fatalf("one's own subject by name: %v", err)
	}
	id, err := startAs(t, h, "admin", []string{"runs:write", core.ScopeMemoriesSubject}, &bob)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := h.store.LoadRun(context.Background(), id)
	if rec.State.Config.Memory.Subject != "bob" {
		t.Fatalf("subject %q", rec.State.Config.Memory.Subject)
	}
	if _, err := startAs(t, h, "", nil, nil); !errors.Is(err, core.ErrInvalidInput) || !strings.Contains(err.Error(), "memory_subject") {
		t.Fatalf("no identity: %v", err)
	}
}

// TestOnlyACompletedRunIsExtracted: a run that fails, or that pauses, has
// no extraction message; nor does a later commit of a finished run.
func TestOnlyACompletedRunIsExtracted(t *testing.T) {
	mem := &fakeMemory{}
	h := newMemoryHarness(t, mem)
	rec, err := h.eng.Start(context.Background(), "acme", durable.StartRequest{Agent: "demo", SessionID: "s-f", Messages: userMsg("hi"),
		Principal: &core.Principal{ActorID: "ann", Tenant: "acme"},
		Overrides: agents.Overrides{Model: scripted(core.ScriptedTurn{Error: "the model is down"})}})
	if err != nil {
		t.Fatal(err)
	}
	if kinds := h.pumpAll(t); fmt.Sprint(kinds) != "[model_turn model_turn]" {
		t.Fatalf("a failed run delivered %v", kinds)
	}
	if got, _ := h.store.LoadRun(context.Background(), rec.State.RunID); got.State.Status != core.StatusFailed {
		t.Fatalf("status %s", got.State.Status)
	}
	if len(mem.extracts) != 0 {
		t.Fatalf("a failed run was extracted: %+v", mem.extracts)
	}
	// A paused run (a client tool) sends nothing until it completes.
	paused, err := h.eng.Start(context.Background(), "acme", durable.StartRequest{Agent: "demo", SessionID: "s-p", Messages: userMsg("hi"),
		Principal:    &core.Principal{ActorID: "ann", Tenant: "acme"},
		RequestTools: []any{map[string]any{"name": "client/ask", "description": "Ask.", "parameters": map[string]any{"type": "object"}}},
		Overrides:    agents.Overrides{Model: scripted(turn("", call("c1", "client/ask", map[string]any{})), turn("Done."))}})
	if err != nil {
		t.Fatal(err)
	}
	if kinds := h.pumpAll(t); fmt.Sprint(kinds) != "[model_turn model_turn tool_call]" {
		t.Fatalf("a paused run delivered %v", kinds)
	}
	if got, _ := h.store.LoadRun(context.Background(), paused.State.RunID); got.State.Status != core.StatusRuntimeToolPending {
		t.Fatalf("status %s", got.State.Status)
	}
}
