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

// TestAgentAliasBounds: the bounds Validate states, at and just past
// each: at most 10 routes, weights of 1 to 100, at most 1000 pins, a
// pinned tenant of at most 128 bytes.
func TestAgentAliasBounds(t *testing.T) {
	vs := make([]string, 11)
	for i := range vs {
		vs[i] = AgentVersionID([]byte(fmt.Sprint(i)))
	}
	routes := func(weights ...int) []AliasRoute {
		out := make([]AliasRoute, len(weights))
		for i, w := range weights {
			out[i] = AliasRoute{vs[i], w}
		}
		return out
	}
	pins := func(n int) map[string]string {
		m := make(map[string]string, n)
		for i := range n {
			m[fmt.Sprintf("t%d", i)] = vs[0]
		}
		return m
	}
	for _, tc := range []struct {
		name string
		a    AgentAlias
		want string // "" valid
	}{
		{"10 routes", AgentAlias{Name: "p", Routes: routes(10, 10, 10, 10, 10, 10, 10, 10, 10, 10)}, ""},
		{"11 routes", AgentAlias{Name: "p", Routes: routes(10, 10, 10, 10, 10, 10, 10, 10, 10, 5, 5)}, "at most 10 routes"},
		{"weight 1", AgentAlias{Name: "p", Routes: routes(1, 99)}, ""},
		{"weight 100", AgentAlias{Name: "p", Routes: routes(100)}, ""},
		{"weight 101", AgentAlias{Name: "p", Routes: routes(101)}, "weight must be 1 to 100"},
		{"1000 pins", AgentAlias{Name: "p", Routes: routes(100), Tenants: pins(1000)}, ""},
		{"1001 pins", AgentAlias{Name: "p", Routes: routes(100), Tenants: pins(1001)}, "at most 1000 tenant pins"},
		{"tenant of 128 bytes", AgentAlias{Name: "p", Routes: routes(100), Tenants: map[string]string{strings.Repeat("t", 128): vs[1]}}, ""},
		{"tenant of 129 bytes", AgentAlias{Name: "p", Routes: routes(100), Tenants: map[string]string{strings.Repeat("t", 129): vs[1]}}, "a tenant name of 1 to 128"},
		{"blank tenant", AgentAlias{Name: "p", Routes: routes(100), Tenants: map[string]string{" ": vs[1]}}, "a tenant name of 1 to 128"},
	} {
		err := tc.a.Validate()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
		} else if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestAgentAliasPickShares: each route gets the share of [0, 100) its
// weight says, the first and the last 1 % included, over three routes.
func TestAgentAliasPickShares(t *testing.T) {
	v1, v2, v3 := AgentVersionID([]byte("1")), AgentVersionID([]byte("2")), AgentVersionID([]byte("3"))
	a := AgentAlias{Name: "prod", Routes: []AliasRoute{{v1, 1}, {v2, 98}, {v3, 1}}}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for i := range 20000 {
		n[a.Pick("globex", fmt.Sprintf("r-%d", i))]++
	}
	// 200 expected on each 1 % route (a standard deviation of 14).
	if n[v1] < 140 || n[v1] > 260 || n[v3] < 140 || n[v3] > 260 {
		t.Fatalf("of 20000 runs, %d on the first 1%% route and %d on the last", n[v1], n[v3])
	}
	b := AgentAlias{Name: "prod", Routes: []AliasRoute{{v1, 40}, {v2, 30}, {v3, 30}}}
	n = map[string]int{}
	for i := range 20000 {
		n[b.Pick("globex", fmt.Sprintf("r-%d", i))]++
	}
	if n[v2] < 5600 || n[v2] > 6400 || n[v3] < 5600 || n[v3] > 6400 {
		t.Fatalf("of 20000 runs, %d and %d on the two 30%% routes", n[v2], n[v3])
	}
}
