package providers

import (
	"regexp"
	"strings"
	"testing"

	"github.com/baton-agents/baton/core"
)

var wireRe = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func decls(names ...string) []core.ToolDeclaration {
	out := make([]core.ToolDeclaration, len(names))
	for i, n := range names {
		out[i] = core.ToolDeclaration{Name: n}
	}
	return out
}

func TestToolNames(t *testing.T) {
	long := "ability/" + strings.Repeat("x", 70)
	cases := []struct {
		name     string
		declared []string
		want     map[string]string // Baton name → wire name ("" = hashed, checked for shape)
	}{
		{"simple", []string{"ability/send_email", "client/get_calendar"},
			map[string]string{"ability/send_email": "ability__send_email", "client/get_calendar": "client__get_calendar"}},
		{"dots and nested slashes", []string{"wp/posts.search", "a/b/c"},
			map[string]string{"wp/posts.search": "wp__posts_search", "a/b/c": "a__b__c"}},
		{"collision hashes both", []string{"a/b/c", "a/b__c", "ability/ok"},
			map[string]string{"a/b/c": "", "a/b__c": "", "ability/ok": "ability__ok"}},
		{"too long", []string{long}, map[string]string{long: ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			names := NewToolNames(decls(tc.declared...))
			seen := map[string]string{}
			for baton, want := range tc.want {
				w := names.Wire(baton)
				if !wireRe.MatchString(w) {
					t.Errorf("Wire(%q) = %q, not a valid function name", baton, w)
				}
				if want != "" && w != want {
					t.Errorf("Wire(%q) = %q, want %q", baton, w, want)
				}
				if want == "" && !regexp.MustCompile(`_[0-9a-f]{8}$`).MatchString(w) {
					t.Errorf("Wire(%q) = %q, want a hash suffix", baton, w)
				}
				if other, dup := seen[w]; dup {
					t.Errorf("%q and %q both map to %q", baton, other, w)
				}
				seen[w] = baton
				if got := names.Baton(w); got != baton {
					t.Errorf("Baton(%q) = %q, want %q", w, got, baton)
				}
			}
			// The mapping does not depend on declaration order.
			rev := append([]string(nil), tc.declared...)
			for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
				rev[i], rev[j] = rev[j], rev[i]
			}
			again := NewToolNames(decls(rev...))
			for _, n := range tc.declared {
				if again.Wire(n) != names.Wire(n) {
					t.Errorf("order changed Wire(%q): %q vs %q", n, again.Wire(n), names.Wire(n))
				}
			}
		})
	}
}

func TestToolNamesUndeclared(t *testing.T) {
	names := NewToolNames(decls("client/get_calendar"))
	// A name the model invents comes back unchanged.
	if got := names.Baton("web_search"); got != "web_search" {
		t.Errorf("Baton(web_search) = %q", got)
	}
	// An undeclared name from the transcript is mapped by the rule and,
	// when its mapped form belongs to a declared tool, hashed.
	if got := names.Wire("ability/old_tool"); got != "ability__old_tool" {
		t.Errorf("Wire(ability/old_tool) = %q", got)
	}
	if got := names.Wire("client__get_calendar"); got == "client__get_calendar" || !wireRe.MatchString(got) {
		t.Errorf("Wire(client__get_calendar) = %q, want a hashed name distinct from the declared tool's", got)
	}
	var zero *ToolNames
	if got := zero.Wire("a/b"); got != "a__b" {
		t.Errorf("nil Wire = %q", got)
	}
}

func TestWireID(t *testing.T) {
	for _, id := range []string{"call_1", "toolu_01A09q90qw90lq917835lq9", "call-2_x"} {
		if WireID(id) != id {
			t.Errorf("WireID(%q) changed a valid id", id)
		}
	}
	a, b := WireID("call.1"), WireID("call:1")
	if a == b || !wireRe.MatchString(a) || !wireRe.MatchString(b) {
		t.Errorf("WireID: %q and %q", a, b)
	}
	if WireID("call.1") != a {
		t.Error("WireID is not deterministic")
	}
	if w := WireID(strings.Repeat("x", 100)); len(w) > 64 || !wireRe.MatchString(w) {
		t.Errorf("WireID(long) = %q", w)
	}
}

// MCP tool names (mcp/<server>/<tool>, the MCP name's characters kept:
// hyphens, dots, capitals) map to valid function names and back.
func TestToolNamesMCP(t *testing.T) {
	names := []string{"mcp/everything/get-sum", "mcp/everything/echo", "mcp/crm/Customers.Get", "mcp/crm/customers_get",
		"mcp/a-very-long-server-name/" + strings.Repeat("tool", 20)}
	tn := NewToolNames(decls(names...))
	wire := map[string]bool{}
	for _, n := range names {
		w := tn.Wire(n)
		if !wireRe.MatchString(w) || wire[w] {
			t.Errorf("%s → %q: invalid or shared", n, w)
		}
		wire[w] = true
		if back := tn.Baton(w); back != n {
			t.Errorf("%s → %q → %s", n, w, back)
		}
	}
	if w := tn.Wire("mcp/everything/get-sum"); w != "mcp__everything__get-sum" {
		t.Errorf("get-sum → %q", w)
	}
}
