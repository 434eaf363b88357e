package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDiffAgents: agents added and removed, and a changed agent's lines
// with each removal before its addition and long unchanged runs folded.
func TestDiffAgents(t *testing.T) {
	a := map[string]json.RawMessage{
		"kept":    json.RawMessage("{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3,\n  \"d\": 4,\n  \"e\": 5,\n  \"f\": 6,\n  \"g\": 7,\n  \"system\": \"one\"\n}"),
		"removed": json.RawMessage("{\n  \"slug\": \"removed\"\n}"),
	}
	b := map[string]json.RawMessage{
		"kept":  json.RawMessage("{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3,\n  \"d\": 4,\n  \"e\": 5,\n  \"f\": 6,\n  \"g\": 7,\n  \"system\": \"two\"\n}"),
		"added": json.RawMessage("{\n  \"slug\": \"added\"\n}"),
	}
	want := `agent added: added
+ {
+   "slug": "added"
+ }
agent kept: changed
  {
    "a": 1,
    "b": 2,
  … 2 unchanged lines
    "e": 5,
    "f": 6,
    "g": 7,
-   "system": "one"
+   "system": "two"
  }
agent removed: removed
- {
-   "slug": "removed"
- }
`
	if got := diffAgents(a, b); got != want {
		t.Fatalf("diff:\n%s\nwant:\n%s", got, want)
	}
	if diffAgents(a, a) != "" {
		t.Fatal("a version differs from itself")
	}
}

func TestLocalTime(t *testing.T) {
	if got := localTime("2026-11-27T13:54:04.881893825Z"); len(got) != len("2026-11-27 13:54:04") || strings.Contains(got, "T") {
		t.Fatalf("localTime: %q", got)
	}
	if got := localTime("soon"); got != "soon" {
		t.Fatalf("not a time: %q", got)
	}
}
