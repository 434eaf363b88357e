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
