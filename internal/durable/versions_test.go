package durable_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/memstore"
)

// mapVersions is a durable.Versions of fixed versions; "" is boot.
type mapVersions map[string]*durable.Version

func (m mapVersions) Load(_ context.Context, id string) (*durable.Version, error) {
	if v, ok := m[id]; ok {
		return v, nil
	}
	return nil, fmt.Errorf("version %s: %w", id, core.ErrNotFound)
}

func versionOf(t *testing.T, id, file string) *durable.Version {
	t.Helper()
	reg, err := agents.Parse([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	return &durable.Version{ID: id, Agents: reg}
}

// TestStartPicksTheVersion: a run starts on its alias's pick (default
// when it names none; the deployment's own file while no default is
// stored), on a version it names only when the default's agent allows
// agent_version, never on both or on an unknown alias or version; the
// version it got is recorded in its configuration.
func TestStartPicksTheVersion(t *testing.T) {
	ctx := context.Background()
	v1, v2 := core.AgentVersionID([]byte("1")), core.AgentVersionID([]byte("2"))
	open := `{"agents":[{"slug":"a","system":"%s","model":{"provider":"scripted"},"allow_overrides":["agent_version"]},{"slug":"closed","model":{"provider":"scripted"}}]}`
	boot := versionOf(t, "", fmt.Sprintf(open, "boot"))
	vs := mapVersions{"": boot, v1: versionOf(t, v1, fmt.Sprintf(open, "one")), v2: versionOf(t, v2, `{"agents":[{"slug":"a","system":"two","model":{"provider":"scripted"}}]}`)}
	store := memstore.New()
	eng := durable.New(durable.Options{Store: store, Queue: memstore.NewStepQueue(0, 5, nil), Agents: boot.Agents, Versions: vs, IDs: &core.SequentialIDs{}})
	n := 0
	start := func(agent, alias, version string) (core.RunConfig, error) {
		n++
		snap, err := eng.Start(ctx, "t", durable.StartRequest{Agent: agent, Alias: alias, Version: version, SessionID: fmt.Sprintf("s%d", n), Messages: []core.Message{{Role: core.RoleUser, Content: "hi"}}})
		return snap.State.Config, err
	}
	// No default stored yet: the deployment's own file.
	if cfg, err := start("a", "", ""); err != nil || cfg.AgentVersion != "" || cfg.System != "boot" {
		t.Fatalf("without a default: %+v %v", cfg, err)
	}
	// An unknown agent's error names the version it was looked for in,
	// when there is one.
	if _, err := start("nope", "", ""); !errors.Is(err, durable.ErrUnknownAgent) || err.Error() != `unknown agent "nope"` {
		t.Fatalf("an unknown agent without a default: %v", err)
	}
	if _, err := store.PutAgentAlias(ctx, core.AgentAlias{Name: core.DefaultAlias, Routes: []core.AliasRoute{{Version: v2, Weight: 100}}}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := store.PutAgentAlias(ctx, core.AgentAlias{Name: "beta", Routes: []core.AliasRoute{{Version: v1, Weight: 100}}}, 0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		agent, alias, version, want, system string
		err                                 error
	}{
		{"a", "", "", v2, "two", nil},
		{"a", "beta", "", v1, "one", nil},
		// default's (v2's) agent a does not allow agent_version.
		{"a", "", v1, "", "", durable.ErrVersionNotAllowed},
		{"a", "beta", v1, "", "", core.ErrInvalidInput},
		{"a", "nosuch", "", "", "", durable.ErrUnknownVersion},
		// closed is not in v2, the default's version.
		{"closed", "", "", "", "", durable.ErrUnknownAgent},
		{"closed", "", v1, "", "", durable.ErrVersionNotAllowed},
	} {
		cfg, err := start(tc.agent, tc.alias, tc.version)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("%s alias %q version %q: %v, want %v", tc.agent, tc.alias, tc.version, err, tc.err)
			}
			continue
		}
		if err != nil || cfg.AgentVersion != tc.want || cfg.System != tc.system {
			t.Errorf("%s alias %q version %q: on %q (%q) %v, want %s", tc.agent, tc.alias, tc.version, cfg.AgentVersion, cfg.System, err, tc.want)
		}
	}
	if _, err := start("closed", "", ""); err == nil || err.Error() != `unknown agent "closed" in agent version `+v2 {
		t.Fatalf("an agent the default's version lacks: %v", err)
	}
	// With default on v1, whose agent a allows it, a request may pin v2;
	// an unknown version is refused.
	if _, err := store.PutAgentAlias(ctx, core.AgentAlias{Name: core.DefaultAlias, Routes: []core.AliasRoute{{Version: v1, Weight: 100}}}, 1); err != nil {
		t.Fatal(err)
	}
	if cfg, err := start("a", "", v2); err != nil || cfg.AgentVersion != v2 {
		t.Fatalf("pinned to v2: %+v %v", cfg, err)
	}
	if _, err := start("a", "", "av_0000000000000000"); !errors.Is(err, durable.ErrUnknownVersion) {
		t.Fatalf("unknown version: %v", err)
	}
	if _, err := start("a", "", "v2"); !errors.Is(err, durable.ErrUnknownVersion) {
		t.Fatalf("a malformed version id: %v", err)
	}
}
