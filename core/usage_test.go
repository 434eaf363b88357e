package core

import (
	"encoding/json"
	"testing"
)

// TestUsageTotals: numeric fields are summed as numbers (integral while
// every addend is), other fields come from the latest call, total_tokens
// is derived when a call omits it, and the JSON is the object it always
// was, read back byte for byte.
func TestUsageTotals(t *testing.T) {
	u := newUsage()
	u.Add(map[string]any{"prompt_tokens": json.Number("20"), "completion_tokens": 8, "details": map[string]any{"cached": json.Number("1")}})
	u.Add(map[string]any{"prompt_tokens": 1.5, "completion_tokens": int64(2), "total_tokens": json.Number("3"), "details": map[string]any{"cached": json.Number("2")}})
	u.Add(map[string]any{"prompt_tokens": 0.5, "cost": json.Number("1e2")})
	b, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"completion_tokens":10,"cost":100,"details":{"cached":2},"prompt_tokens":22,"total_tokens":31.5}`
	if string(b) != want {
		t.Fatalf("usage %s, want %s", b, want)
	}
	var back Usage
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if again, _ := json.Marshal(back); string(again) != want || back.Number("total_tokens") != 31.5 || back.Number("prompt_tokens") != 22 {
		t.Fatalf("read back %s", again)
	}
	// A copy shares nothing it changes: the original keeps its totals.
	c := back
	c.Add(map[string]any{"prompt_tokens": 1, "details": "gone", "a": 1, "b": 2, "c": 3})
	if again, _ := json.Marshal(back); string(again) != want {
		t.Fatalf("a copy's Add changed the original: %s", again)
	}
	if c.Number("prompt_tokens") != 23 || c.Map()["details"] != "gone" || c.Number("c") != 3 {
		t.Fatalf("copy %v", c.Map())
	}
	// The compaction line nests, and a second line adds to the first.
	var call Usage
	call.Add(map[string]any{"prompt_tokens": 4, "completion_tokens": 1})
	u.addCompaction(call.Map())
	u.addCompaction(call.Map())
	b, _ = json.Marshal(u)
	if string(b) != `{"compaction":{"completion_tokens":2,"prompt_tokens":8,"total_tokens":10},"completion_tokens":12,"cost":100,"details":{"cached":2},"prompt_tokens":30,"total_tokens":41.5}` {
		t.Fatalf("with compaction %s", b)
	}
	if err := json.Unmarshal([]byte(`[1]`), &back); err == nil {
		t.Fatal("a usage that is not an object was accepted")
	}
}

// TestUsageFieldTurnsNonNumeric: a field a later call reports as
// something other than a number replaces its total, whether that total
// is among the first four or past them, and the others keep theirs.
func TestUsageFieldTurnsNonNumeric(t *testing.T) {
	u := newUsage()                                       // prompt_tokens, completion_tokens, total_tokens
	u.Add(map[string]any{"a": 1, "b": 2, "c": 3, "d": 4}) // a ends the first four; b, c, d past them
	before := u
	u.Add(map[string]any{"completion_tokens": "n/a", "c": map[string]any{"x": "y"}})
	b, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"a":1,"b":2,"c":{"x":"y"},"completion_tokens":"n/a","d":4,"prompt_tokens":0,"total_tokens":0}`
	if string(b) != want {
		t.Fatalf("usage %s, want %s", b, want)
	}
	u.Add(map[string]any{"a": 10, "d": 10, "e": 5})
	if u.Number("a") != 11 || u.Number("d") != 14 || u.Number("e") != 5 || u.Number("c") != 0 {
		t.Fatalf("after more calls %v", u.Map())
	}
	if b, _ := json.Marshal(before); string(b) != `{"a":1,"b":2,"c":3,"completion_tokens":0,"d":4,"prompt_tokens":0,"total_tokens":0}` {
		t.Fatalf("the copy taken before changed: %s", b)
	}
}

// TestUsageLargeTotals: a total stays integral only while int64 holds
// it exactly; 2^63 is kept as the float it is.
func TestUsageLargeTotals(t *testing.T) {
	var u Usage
	u.Add(map[string]any{"x": float64(1 << 63)})
	if got := u.Number("x"); got != float64(1<<63) {
		t.Fatalf("2^63 read back as %v", got)
	}
	u.Add(map[string]any{"y": float64(1<<62) + float64(1<<62) - float64(1<<10)})
	if got, want := u.Map()["y"], json.Number("9223372036854774784"); got != want {
		t.Fatalf("2^63-1024: %v, want %v", got, want)
	}
}

// TestUsageIsEmpty: a usage is empty until it holds a total, a
// non-numeric field or a compaction's usage.
func TestUsageIsEmpty(t *testing.T) {
	var totals, other, compaction Usage
	totals.Add(map[string]any{"prompt_tokens": json.Number("3")})
	other.Add(map[string]any{"service_tier": "default"})
	compaction.addCompaction(map[string]any{"prompt_tokens": json.Number("3")})
	for _, tc := range []struct {
		name  string
		u     Usage
		empty bool
	}{{"zero", Usage{}, true}, {"a run's first, totals at zero", newUsage(), false}, {"a total", totals, false}, {"a field", other, false}, {"a compaction", compaction, false}} {
		if got := tc.u.IsEmpty(); got != tc.empty {
			t.Errorf("%s: IsEmpty %v, want %v", tc.name, got, tc.empty)
		}
	}
}

// TestUsageFloatTotals: a total that is not a whole number keeps every
// digit it was reported with.
func TestUsageFloatTotals(t *testing.T) {
	var u Usage
	u.Add(map[string]any{"cost": json.Number("1.25")})
	u.Add(map[string]any{"cost": json.Number("0.125")})
	if got := u.Map()["cost"]; got != json.Number("1.375") {
		t.Fatalf("cost %v, want 1.375", got)
	}
}

// TestUsageDerivesTotalTokens: total_tokens is derived from a call that
// reports prompt or completion tokens, either alone, and not from one
// that reports only other numbers.
func TestUsageDerivesTotalTokens(t *testing.T) {
	for _, tc := range []struct {
		call map[string]any
		want string
	}{
		{map[string]any{"prompt_tokens": 5}, `{"prompt_tokens":5,"total_tokens":5}`},
		{map[string]any{"completion_tokens": 3}, `{"completion_tokens":3,"total_tokens":3}`},
		{map[string]any{"prompt_tokens": 5, "completion_tokens": 3}, `{"completion_tokens":3,"prompt_tokens":5,"total_tokens":8}`},
		{map[string]any{"cost": 2}, `{"cost":2}`},
		{map[string]any{"cost": 2, "total_tokens": 1}, `{"cost":2,"total_tokens":1}`},
	} {
		var u Usage
		u.Add(tc.call)
		if b, _ := json.Marshal(u); string(b) != tc.want {
			t.Errorf("%v: usage %s, want %s", tc.call, b, tc.want)
		}
	}
}
