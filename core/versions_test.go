package core

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestAgentVersionID(t *testing.T) {
	a, b := AgentVersionID([]byte(`{"agents":[]}`)), AgentVersionID([]byte(`{"agents":[ ]}`))
	if !ValidAgentVersionID(a) || a == b || a != AgentVersionID([]byte(`{"agents":[]}`)) {
		t.Fatalf("ids %s %s", a, b)
	}
	for _, bad := range []string{"", "av_", "av_0123", "AV_0123456789abcdef", "av_0123456789abcdeg", "xx_0123456789abcdef"} {
		if ValidAgentVersionID(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestAgentAliasValidate(t *testing.T) {
	v1, v2 := AgentVersionID([]byte("1")), AgentVersionID([]byte("2"))
	ok := AgentAlias{Name: "canary", Routes: []AliasRoute{{v1, 70}, {v2, 30}}, Tenants: map[string]string{"acme": v2}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		a    AgentAlias
		want string
	}{
		{"bad name", AgentAlias{Name: "Prod!", Routes: []AliasRoute{{v1, 100}}}, "alias name"},
		{"no routes", AgentAlias{Name: "p"}, "at least one version"},
		{"sum 90", AgentAlias{Name: "p", Routes: []AliasRoute{{v1, 60}, {v2, 30}}}, "sum to 100, got 90"},
		{"sum 110", AgentAlias{Name: "p", Routes: []AliasRoute{{v1, 80}, {v2, 30}}}, "sum to 100, got 110"},
		{"zero weight", AgentAlias{Name: "p", Routes: []AliasRoute{{v1, 100}, {v2, 0}}}, "weight must be 1 to 100"},
		{"twice", AgentAlias{Name: "p", Routes: []AliasRoute{{v1, 50}, {v1, 50}}}, "routed twice"},
		{"bad version", AgentAlias{Name: "p", Routes: []AliasRoute{{"v1", 100}}}, "not a version id"},
		{"bad pin", AgentAlias{Name: "p", Routes: []AliasRoute{{v1, 100}}, Tenants: map[string]string{"acme": "latest"}}, "tenants[acme]"},
	} {
		err := tc.a.Validate()
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestAgentAliasPick: a pin wins; the split is deterministic per run id
// and follows the weights over many run ids.
func TestAgentAliasPick(t *testing.T) {
	v1, v2 := AgentVersionID([]byte("1")), AgentVersionID([]byte("2"))
	a := AgentAlias{Name: "prod", Routes: []AliasRoute{{v1, 70}, {v2, 30}}, Tenants: map[string]string{"acme": v1}}
	n := 0
	for i := range 10000 {
		id := fmt.Sprintf("r-%d", i)
		got := a.Pick("globex", id)
		if got != a.Pick("globex", id) {
			t.Fatal("not deterministic")
		}
		if got == v2 {
			n++
		}
		if a.Pick("acme", id) != v1 {
			t.Fatal("pin ignored")
		}
	}
	if n < 2800 || n > 3200 {
		t.Fatalf("%d of 10000 runs on the 30%% route", n)
	}
	if one := (AgentAlias{Routes: []AliasRoute{{v2, 100}}}); one.Pick("x", "r") != v2 {
		t.Fatal("single route")
	}
	if got := a.Versions(); len(got) != 2 || got[0] != v1 || got[1] != v2 {
		t.Fatalf("versions %v", got)
	}
}
