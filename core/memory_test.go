package core

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestMemoryNamesAndSubjects(t *testing.T) {
	if AgentSubject("concierge") != "agent:concierge" || MemoryExtractID("r-1") != "extract:r-1" {
		t.Fatal("derived names")
	}
	if DefaultMemorySubject(nil) != "" || DefaultMemorySubject(&Principal{ActorID: "ann"}) != "ann" {
		t.Fatal("default subject")
	}
	for s, ok := range map[string]bool{"": false, "ann": true, strings.Repeat("a", MaxSubjectLen): true, strings.Repeat("a", MaxSubjectLen+1): false,
		"ann\n": false, "ann\x7f": false, "ann\xff": false, "Zoë Smith": true} {
		if err := ValidateSubject(s); (err == nil) != ok || err != nil && !errors.Is(err, ErrInvalidInput) {
			t.Errorf("ValidateSubject(%q): %v", s, err)
		}
	}
	if err := (MemoryScope{Tenant: "acme"}).Validate(); err == nil {
		t.Fatal("a scope without a subject")
	}
	if err := (MemoryScope{Subject: "ann"}).Validate(); err == nil {
		t.Fatal("a scope without a tenant")
	}
}

func TestMemoryValidate(t *testing.T) {
	ok := Memory{ID: "m-1", Subject: "ann", Text: strings.Repeat("x", MaxMemoryText), Vector: make([]int8, MaxMemoryDims)}
	if err := ok.Validate(); err != nil {
		t.Fatalf("a memory at the limits: %v", err)
	}
	for name, m := range map[string]Memory{
		"no id":       {Text: "x"},
		"no text":     {ID: "m-1"},
		"long text":   {ID: "m-1", Text: strings.Repeat("x", MaxMemoryText+1)},
		"long vector": {ID: "m-1", Text: "x", Vector: make([]int8, MaxMemoryDims+1)},
		"unprintable": {ID: "m\n1", Text: "x"},
	} {
		if err := m.Validate(); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestMemoryWriteLimits(t *testing.T) {
	scope := MemoryScope{Tenant: "acme", Subject: "ann"}
	mems := func(n int) []Memory {
		out := make([]Memory, n)
		for i := range out {
			out[i] = Memory{ID: "m-" + strings.Repeat("i", i+1), Subject: "ann", Text: "x"}
		}
		return out
	}
	if err := (MemoryWrite{Scope: scope, Put: mems(MaxMemoryWrite), Once: strings.Repeat("k", MaxMemoryOnce)}).Validate(); err != nil {
		t.Fatalf("a write at the limits: %v", err)
	}
	for name, w := range map[string]MemoryWrite{
		"too many":         {Scope: scope, Put: mems(MaxMemoryWrite), Delete: []string{"x"}},
		"long once":        {Scope: scope, Once: strings.Repeat("k", MaxMemoryOnce+1)},
		"another subject":  {Scope: scope, Put: []Memory{{ID: "m", Subject: "bob", Text: "x"}}},
		"a bad memory":     {Scope: scope, Put: []Memory{{ID: "m", Subject: "ann"}}},
		"no scope subject": {Scope: MemoryScope{Tenant: "acme"}},
	} {
		if err := w.Validate(); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestEstimateTokens(t *testing.T) {
	for text, want := range map[string]int{"": 0, "a": 1, "abcd": 1, "abcde": 2, "ëëëëë": 2} {
		if got := EstimateTokens(text); got != want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", text, got, want)
		}
	}
}

func TestMemoryContext(t *testing.T) {
	mem := func(seq int64, text string) Message {
		return Message{Role: RoleUser, Content: text, Seq: seq, Metadata: map[string]any{MetaSource: MessagesMemory}}
	}
	st := RunState{FirstMsgSeq: 5, Config: RunConfig{Memory: &MemoryPolicy{Subject: "ann"}}}
	view := []Message{mem(4, "older run's"), {Role: RoleUser, Content: "hi", Seq: 5}, mem(5, "this run's")}
	out, system := st.memoryContext(view, "")
	if system != "this run's" || len(out) != 1 || out[0].Content != "hi" {
		t.Fatalf("memory first in the view: %q %+v", system, out)
	}
	if view[0].Content != "older run's" || len(view) != 3 {
		t.Fatal("the view was changed")
	}
	out, system = st.memoryContext(view, "sys")
	if system != "sys\n\nthis run's" || len(out) != 1 {
		t.Fatalf("with a system prompt: %q", system)
	}
	plain := []Message{{Role: RoleUser, Content: "hi"}}
	if out, system := st.memoryContext(plain, "sys"); system != "sys" || len(out) != 1 {
		t.Fatal("no memory message")
	}
	st.Config.Memory = nil
	if out, system := st.memoryContext(view, "sys"); system != "sys" || len(out) != 1 {
		t.Fatalf("a run without memory still drops memory messages and adds none: %q %+v", system, out)
	}
}

func TestRecallQueryAndBudget(t *testing.T) {
	st := &RunState{RunID: "r-1", FirstMsgSeq: 2, Config: RunConfig{Agent: "a", AgentVersion: "av_1", Memory: &MemoryPolicy{Subject: "ann", TopK: 2}},
		Inbox: []InboxMessage{{Content: "and steer"}}}
	tr := []Message{{Role: RoleUser, Content: "before", Seq: 1}, {Role: RoleUser, Content: "first", Seq: 2},
		{Role: RoleUser, Content: "summary", Seq: 3, Metadata: map[string]any{MetaSource: "compaction"}}, {Role: RoleUser, Content: "second", Seq: 4}}
	r := recallPlan(st, tr)
	if r == nil || r.Query != "first\nsecond\nand steer" || r.MaxTokens != DefaultRecallMaxTokens || r.TopK != 2 || r.AgentVersion != "av_1" {
		t.Fatalf("recall %+v", r)
	}
	long := strings.Repeat("é", MaxRecallQuery)
	if r := recallPlan(st, []Message{{Role: RoleUser, Content: long, Seq: 2}}); len(r.Query) > MaxRecallQuery || !strings.HasPrefix(long, r.Query) {
		t.Fatalf("query of %d bytes", len(r.Query))
	}
	st.Turn = 1
	if recallPlan(st, tr) != nil {
		t.Fatal("a recall after the first turn")
	}
}

func TestMemoryWrittenOnAFinishedRun(t *testing.T) {
	m := NewMachine(&FixedClock{T: t0})
	st := RunState{Format: StateFormat, RunID: "r-1", Status: StatusCompleted, Version: 3, UpdatedAt: t0.Add(-time.Minute)}
	out, err := m.Apply(context.Background(), st, nil, MemoryWritten{Source: MemoryFromExtraction, Added: []string{"m-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if !out.State.Extracted || len(out.Events) != 1 || out.Events[0].Type != EventMemoryWritten || out.State.Status != StatusCompleted {
		t.Fatalf("first: %+v", out)
	}
	if _, err := m.Apply(context.Background(), out.State, nil, MemoryWritten{Source: MemoryFromExtraction}); !errors.Is(err, ErrNothingToApply) {
		t.Fatalf("second extraction recorded: %v", err)
	}
	// A tool's write is not an extraction: it records every time.
	if _, err := m.Apply(context.Background(), out.State, nil, MemoryWritten{Source: MemoryFromTool, Deleted: []string{"m-1"}}); err != nil {
		t.Fatal(err)
	}
}

func TestMemoryToolWrites(t *testing.T) {
	for name, c := range map[string]struct {
		meta map[string]any
		want string
	}{
		"added":       {map[string]any{MetaMemoryWritten: map[string]any{"added": []any{"m-1"}}}, "m-1"},
		"updated":     {map[string]any{MetaMemoryWritten: map[string]any{"updated": []string{"m-2"}}}, "m-2"},
		"deleted":     {map[string]any{MetaMemoryWritten: map[string]any{"deleted": []any{"m-3", 7}}}, "m-3"},
		"nothing":     {map[string]any{MetaMemoryWritten: map[string]any{"added": []any{}}}, ""},
		"no metadata": {nil, ""},
	} {
		t.Run(name, func(t *testing.T) {
			st := RunState{NextEventSeq: 1}
			tr := &transition{st: &st, out: &Output{}}
			tr.memoryToolWrote(c.meta)
			if c.want == "" {
				if len(tr.out.Events) != 0 {
					t.Fatalf("events %+v", tr.out.Events)
				}
				return
			}
			if len(tr.out.Events) != 1 {
				t.Fatalf("events %+v", tr.out.Events)
			}
			d := tr.out.Events[0].Data.(*MemoryWrittenData)
			got := strings.Join(append(append(append([]string(nil), d.Added...), d.Updated...), d.Deleted...), ",")
			if got != c.want || d.Source != MemoryFromTool {
				t.Fatalf("%+v", d)
			}
		})
	}
}
