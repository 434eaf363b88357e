package core

import (
	"errors"
	"fmt"
	"testing"
)

// TestCallerChainDepthBounds: a caller's chain depth is accepted from 0
// through the depth limit, both included; ParseCallerContext's limit is
// the one it is given when it is 1 to MaxChainDepth, and MaxChainDepth
// otherwise; a chain root header names the chain's root.
func TestCallerChainDepthBounds(t *testing.T) {
	for _, tc := range []struct {
		depth, max int
		ok         bool
	}{
		{0, 0, true},
		{MaxChainDepth, 0, true},
		{MaxChainDepth + 1, 0, false},
		{4, 4, true},
		{5, 4, false},
		{1, 1, true},
		{2, 1, false},
		{MaxChainDepth, MaxChainDepth + 4, true},
		{MaxChainDepth + 1, MaxChainDepth + 4, false},
		{MaxChainDepth, -1, true},
	} {
		h := map[string]string{HeaderChainDepth: fmt.Sprint(tc.depth)}
		c, err := ParseCallerContext(h, "root", tc.max)
		if tc.ok && (err != nil || c.ChainDepth != tc.depth) || !tc.ok && !errors.Is(err, ErrInvalidInput) {
			t.Errorf("depth %d with limit %d: %+v, %v", tc.depth, tc.max, c, err)
		}
	}
	for depth, ok := range map[int]bool{0: true, MaxChainDepth: true, MaxChainDepth + 1: false, -1: false} {
		p := &Principal{Caller: &CallerContext{ChainDepth: depth, CallerHost: "self"}}
		if err := p.Validate(); (err == nil) != ok {
			t.Errorf("a principal at depth %d: %v", depth, err)
		}
	}
	c, err := ParseCallerContext(map[string]string{HeaderChainRoot: " run-0 ", HeaderCallerAgent: "planner"}, "root", 0)
	if err != nil || c.ChainRoot != "run-0" || c.CallerAgent != "planner" || c.CallerHost != "self" {
		t.Fatalf("with a chain root: %+v, %v", c, err)
	}
	if c, err := ParseCallerContext(map[string]string{HeaderChainRoot: " ", HeaderCallerHost: ""}, "root", 0); err != nil || c.ChainRoot != "root" || c.CallerHost != "self" {
		t.Fatalf("with empty headers: %+v, %v", c, err)
	}
}

// TestPrincipalAllows: an empty capability ceiling (or none) permits
// every capability; otherwise the ceiling must list it, or "*".
func TestPrincipalAllows(t *testing.T) {
	for _, tc := range []struct {
		p    *Principal
		cap  string
		want bool
	}{
		{nil, "tools:x", true},
		{&Principal{}, "tools:x", true},
		{&Principal{CapabilityCeiling: []string{"tools:x"}}, "tools:x", true},
		{&Principal{CapabilityCeiling: []string{"tools:x"}}, "tools:y", false},
		{&Principal{CapabilityCeiling: []string{"tools:y", "*"}}, "tools:x", true},
	} {
		if got := tc.p.Allows(tc.cap); got != tc.want {
			t.Errorf("%+v allows %q: %v", tc.p, tc.cap, got)
		}
	}
}
