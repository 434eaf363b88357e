package durable

import (
	"fmt"
	"testing"

	"github.com/baton-agents/baton/core"
)

// TestFirstDivergence: two transcripts differ first at the first seq
// whose messages differ (a tool call's parameters compared canonically),
// or where one of them ends; none when they are the same from the seq
// on.
func TestFirstDivergence(t *testing.T) {
	msg := func(seq int64, role, content string) core.Message {
		return core.Message{Seq: seq, Role: role, Content: content}
	}
	toolCall := func(seq int64, params map[string]any) core.Message {
		return core.Message{Seq: seq, Role: core.RoleToolCall, Metadata: map[string]any{core.MetaToolName: "ability/search", core.MetaParameters: params}}
	}
	a := []core.Message{msg(1, core.RoleUser, "hi"), toolCall(2, map[string]any{"q": "x", "n": 1}), msg(3, core.RoleAssistant, "one")}
	for _, tc := range []struct {
		name string
		b    []core.Message
		from int64
		want string
	}{
		{"the same", []core.Message{a[0], toolCall(2, map[string]any{"n": 1, "q": "x"}), a[2]}, 0, "none"},
		{"a longer one", append(a[:3:3], msg(4, core.RoleUser, "more")), 0, "4: a <nil>, b more"},
		{"a shorter one", a[:2], 0, "3: a one, b <nil>"},
		{"other parameters", []core.Message{a[0], toolCall(2, map[string]any{"q": "y", "n": 1}), a[2]}, 0, "2: a , b "},
		{"another answer", []core.Message{a[0], a[1], msg(3, core.RoleAssistant, "two")}, 0, "3: a one, b two"},
		{"another answer, from 3", []core.Message{a[0], a[1], msg(3, core.RoleAssistant, "two")}, 3, "3: a one, b two"},
		{"a different start, from 2", []core.Message{msg(1, core.RoleUser, "hello"), a[1], a[2]}, 2, "none"},
	} {
		got := "none"
		if d := firstDivergence(a, tc.b, tc.from); d != nil {
			content := func(m *MessageView) any {
				if m == nil {
					return nil
				}
				return m.Content
			}
			got = fmt.Sprintf("%d: a %v, b %v", d.Seq, content(d.A), content(d.B))
		}
		if got != tc.want {
			t.Errorf("%s: diverged at %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestForkPrincipal: a fork runs as its source's principal, on the
// caller's tenant, with the scopes both hold (an empty ceiling holds
// every scope); without a source principal, as the caller.
func TestForkPrincipal(t *testing.T) {
	p := func(actor string, ceiling ...string) *core.Principal {
		return &core.Principal{Tenant: "acme", ActorID: actor, CapabilityCeiling: ceiling}
	}
	for _, tc := range []struct {
		src, caller *core.Principal
		want        string
	}{
		{p("ann", "runs:read"), p("bob", "runs:read", "runs:write"), "ann [runs:read]"},
		{p("ann", "runs:read", "crm:write"), p("bob", "runs:read", "runs:write"), "ann [runs:read]"},
		{p("ann"), p("bob", "runs:read"), "ann [runs:read]"},
		{p("ann", "runs:read"), p("bob"), "ann [runs:read]"},
		{p("ann", "runs:read"), nil, "ann [runs:read]"},
		{nil, p("bob", "runs:write"), "bob [runs:write]"},
	} {
		got := forkPrincipal(tc.src, tc.caller)
		if s := fmt.Sprintf("%s %v", got.ActorID, got.CapabilityCeiling); s != tc.want {
			t.Errorf("source %+v, caller %+v: %s, want %s", tc.src, tc.caller, s, tc.want)
		}
	}
}

// TestForkPointErrorNamesTheForkPoints: the error lists the run's fork
// points, "…" when there are more, or says there are none.
func TestForkPointErrorNamesTheForkPoints(t *testing.T) {
	for _, tc := range []struct {
		fe   ForkPointError
		want string
	}{
		{ForkPointError{Run: "r", Seq: 2, Why: "is a tool_call message, inside a turn", Valid: []ForkPointRef{{1, core.RoleUser}, {4, core.RoleAssistant}}},
			"message 2 of run r is a tool_call message, inside a turn; a fork starts at a user or assistant message of the run: 1 (user), 4 (assistant)"},
		{ForkPointError{Run: "r", Seq: 9, Why: "is not in the run's transcript", Valid: []ForkPointRef{{1, core.RoleUser}}, More: true},
			"message 9 of run r is not in the run's transcript; a fork starts at a user or assistant message of the run: 1 (user), …"},
		{ForkPointError{Run: "r", Seq: 1, Why: "is not in the run's transcript"},
			"message 1 of run r is not in the run's transcript; a fork starts at a user or assistant message of the run: none"},
	} {
		if got := tc.fe.Error(); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}
