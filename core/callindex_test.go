package core

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"testing"
)

// indexTranscript is a session of two runs: the first (seqs 1–5) called
// search{q:a} with a result, the second (from seq 6) called search{q:b}
// and search{q:c} with results, then search{q:d} without one, and stores
// a compaction summary at seq 11.
func indexTranscript() []Message {
	call := func(id, q string, turn int) Message {
		m := toolCallMessage(id, "ability/search", map[string]any{"q": q, "n": json.Number("1")})
		m.Metadata[MetaTurn] = turn
		return m
	}
	result := func(id string) Message {
		return Message{Role: RoleToolResult, Content: "r", Metadata: map[string]any{MetaToolCallID: id, MetaToolName: "ability/search"}}
	}
	msgs := []Message{
		{Role: RoleUser, Content: "first"}, call("c1", "a", 1), result("c1"), {Role: RoleAssistant, Content: "ok"}, {Role: RoleUser, Content: "x"},
		{Role: RoleUser, Content: "second"}, call("c2", "b", 1), result("c2"), call("c3", "c", 2), result("c3"),
		{Role: RoleUser, Content: "[Conversation summary: s]", Metadata: map[string]any{MetaCompaction: map[string]any{"status": "compacted", "compacted_through": json.Number("7")}}},
		call("c4", "d", 3),
	}
	for i := range msgs {
		msgs[i].Seq = int64(i + 1)
	}
	return msgs
}

// TestTranscriptIndexAgreesWithTheScan checks each answer the index gives
// against the transcript scan it replaces: duplicates (only answered calls
// of this run count, siblings of a parallel turn never), used call ids and
// the latest compaction summary, for transcripts the index has seen in
// full, in part, and beyond (an older state's shorter transcript).
func TestTranscriptIndexAgreesWithTheScan(t *testing.T) {
	full := indexTranscript()
	cases := []struct {
		name string
		seen []Message // what the index was synced with first
		tr   []Message // the transcript of the step
	}{
		{"fresh", nil, full},
		{"incremental", full[:7], full},
		{"ahead of the step", full, full[:9]},
	}
	// A run's messages may start with a call and its result (a caller's
	// input), so the second run may also start at c2's tool_call (seq 7).
	for _, tc := range cases {
		for _, first := range []int64{6, 7} {
			for _, parallel := range []bool{false, true} {
				for _, q := range []string{"a", "b", "c", "d", "e"} {
					t.Run(fmt.Sprintf("%s/first=%d/parallel=%v/q=%s", tc.name, first, parallel, q), func(t *testing.T) {
						st := RunState{RunID: "r", SessionID: "s", FirstMsgSeq: first, Turn: 2, Config: RunConfig{ParallelToolCalls: parallel}}
						c := CallState{ID: "new", Name: "ability/search", Parameters: map[string]any{"n": json.Number("1"), "q": q}}
						st.Calls = []CallState{c, {ID: "c3"}}
						wantTurn, want := findAnsweredDuplicate(&st, tc.tr, &c)
						ix := NewTranscriptIndex("s")
						if tc.seen != nil {
							ix.mayHaveAnswered(tc.seen, 0, &CallState{Name: "x", Parameters: map[string]any{}})
						}
						st.UseIndex(ix)
						gotTurn, got := findAnsweredDuplicate(&st, tc.tr, &c)
						if got != want || gotTurn != wantTurn {
							t.Fatalf("indexed: duplicate %v (turn %d), scan: %v (turn %d)", got, gotTurn, want, wantTurn)
						}
						if q == "b" && !parallel && !want {
							t.Fatal("the scan found no duplicate of an answered call of this run")
						}
						if view, scan := compactedView(tc.tr, ix), compactedView(tc.tr, nil); len(view) != len(scan) || (len(view) > 0 && view[0].Seq != scan[0].Seq) {
							t.Fatalf("compacted view: %d messages from the index, %d from the scan", len(view), len(scan))
						}
					})
				}
			}
		}
	}
	ix := NewTranscriptIndex("s")
	if !ix.describes(full) || !ix.hasID("c4") || !ix.hasID("c1") || ix.hasID("c5") {
		t.Fatal("the index does not answer from the whole transcript")
	}
	if ix.describes(full[:3]) {
		t.Fatal("the index answers for a transcript shorter than it")
	}
	if _, ok := compactionMeta(compactedView(full, ix)[0]); !ok {
		t.Fatal("the compaction summary was not found")
	}
	other := RunState{SessionID: "other"}
	other.UseIndex(ix)
	if other.index != nil {
		t.Fatal("an index of another session was attached")
	}
}

// TestToolResultJSONObject checks the audit hash's shortcut: the canonical
// encoding of a result's object equals that of the result itself.
func TestToolResultJSONObject(t *testing.T) {
	for _, r := range []ToolResult{
		{},
		{Success: true, ToolName: "t", Result: map[string]any{"a": []any{json.Number("1"), "x"}}},
		{ToolName: "t", Error: "e", ErrorType: ErrTypeTimedOut, Metadata: map[string]any{"k": true}, Runtime: map[string]any{"ms": json.Number("3")}},
		{ToolName: "t", Metadata: map[string]any{}, Runtime: map[string]any{}, Result: struct{ A int }{1}},
		{Success: true, ToolName: "t\u00e9<>", Result: "r", Error: "e", ErrorType: "x", Metadata: map[string]any{"k": nil}, Runtime: map[string]any{"ms": json.Number("3")}},
		{ToolName: "t", Result: map[string]any(nil)},
		{ToolName: "t", Metadata: map[string]any{"f": 1.5}},
	} {
		want, err := CanonicalJSON(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := CanonicalJSON(r.jsonObject())
		if err != nil || string(got) != string(want) {
			t.Errorf("%+v: %s, want %s (%v)", r, got, want, err)
		}
		if h := r.resultHash(); h != SHA256Tagged(want) {
			t.Errorf("%+v: resultHash %s, want %s", r, h, SHA256Tagged(want))
		}
	}
}

// TestCallKeyIsFNV1a: the duplicate key is the 64-bit FNV-1a of the
// name, a zero byte and the canonical parameters, from bytes or a string.
func TestCallKeyIsFNV1a(t *testing.T) {
	h := fnv.New64a()
	h.Write([]byte("ability/search\x00{\"q\":\"a\"}"))
	if got := callKeyOf("ability/search", `{"q":"a"}`); got != h.Sum64() || callKeyOf("ability/search", []byte(`{"q":"a"}`)) != got {
		t.Fatalf("callKeyOf = %x, want %x", got, h.Sum64())
	}
}

// TestTranscriptIndexTakesTheKnownKey: sync takes the key of the call its
// caller computed already (known) for that call's tool_call message, and
// computes every other call's own.
func TestTranscriptIndexTakesTheKnownKey(t *testing.T) {
	full := indexTranscript()
	ix := NewTranscriptIndex("s")
	ix.known.id, ix.known.key = "c2", 42
	if !ix.sync(full) {
		t.Fatal("the index does not describe the transcript it indexed")
	}
	other, _ := callKey("ability/search", full[8].Metadata[MetaParameters])
	if ix.answered[42] != 7 || ix.answered[other] != 9 {
		t.Fatalf("answered: %v, want c2 (seq 7) under the known key and c3 (seq 9) under its own", ix.answered)
	}
}

// TestTranscriptIndexLatestSummary: the index answers with the latest
// summary's position in the transcript it describes (-1 without one, as
// for an empty transcript it has seen nothing of), and cannot answer for a
// shorter transcript nor for one that starts after the summary.
func TestTranscriptIndexLatestSummary(t *testing.T) {
	full := indexTranscript()
	for _, tc := range []struct {
		name     string
		seen, tr []Message
		pos      int
		ok       bool
	}{
		{"the whole transcript", nil, full, 10, true},
		{"before the summary", nil, full[:10], -1, true},
		{"from the summary on", full, full[10:], 0, true},
		{"after the summary", full, full[11:], 0, false},
		{"shorter than it saw", full, full[:9], 0, false},
		{"an empty transcript", nil, nil, -1, true},
		{"empty after it saw some", full, nil, 0, false},
	} {
		ix := NewTranscriptIndex("s")
		if tc.seen != nil {
			ix.describes(tc.seen)
		}
		if pos, ok := ix.latestSummary(tc.tr); pos != tc.pos || ok != tc.ok {
			t.Errorf("%s: latestSummary = %d, %v; want %d, %v", tc.name, pos, ok, tc.pos, tc.ok)
		}
	}
}
