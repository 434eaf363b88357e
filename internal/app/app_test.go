package app

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/httpapi"
)

func agentsJSON(slug string) string {
	return `{"agents":[{"slug":"` + slug + `","model":{"provider":"scripted"}}]}`
}

var quiet = slog.New(slog.DiscardHandler)

func TestBuildAgentsSource(t *testing.T) {
	file := filepath.Join(t.TempDir(), "agents.json")
	if err := os.WriteFile(file, []byte(agentsJSON("from-file")), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		src  Agents
		want string
	}{
		{"file", Agents{File: file}, "from-file"},
		{"inline JSON wins over the file", Agents{File: file, JSON: agentsJSON("from-json")}, "from-json"},
		{"bytes win over both", Agents{File: file, JSON: agentsJSON("from-json"), Bytes: []byte(agentsJSON("from-bytes"))}, "from-bytes"},
	} {
		a, err := Build(context.Background(), Config{Stores: Stores{Memory: true}, Agents: c.src, Providers: []string{ProviderScripted}}, Deps{Log: quiet})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := a.AgentSlugs(); len(got) != 1 || got[0] != c.want {
			t.Errorf("%s: agents %v, want [%s]", c.name, got, c.want)
		}
		if a.Tools != nil {
			t.Errorf("%s: tools built without ExecuteTools", c.name)
		}
		if a.Stores.Describe != "embedded in-memory stores" || a.Runner == nil || a.API == nil || a.Worker == nil || a.Steps == nil || a.Tokens == nil {
			t.Errorf("%s: app %+v", c.name, a)
		}
	}
}

type countingStore struct {
	durable.Store
	n *int
}

func (s countingStore) LoadRun(ctx context.Context, id string) (core.RunRecord, error) {
	*s.n++
	return s.Store.LoadRun(ctx, id)
}

type countingQueue struct {
	Queue
	n *int
}

func (q countingQueue) Enqueue(ctx context.Context, steps []core.QueuedStep) error {
	*q.n++
	return q.Queue.Enqueue(ctx, steps)
}

// TestBuildWrapsAndInjects: the wrappers sit under the runner, and the
// injected clock and IDs reach it.
func TestBuildWrapsAndInjects(t *testing.T) {
	var loads, sends int
	clock := &core.FixedClock{}
	a, err := Build(context.Background(), Config{Stores: Stores{Memory: true}, Agents: Agents{JSON: agentsJSON("a")}, Providers: []string{ProviderScripted}, ExecuteTools: true},
		Deps{Clock: clock, IDs: &core.SequentialIDs{}, Log: quiet,
			WrapStore: func(s durable.Store) durable.Store { return countingStore{s, &loads} },
			WrapQueue: func(q Queue) Queue { return countingQueue{q, &sends} }})
	if err != nil {
		t.Fatal(err)
	}
	if a.Tools == nil {
		t.Fatal("ExecuteTools built no tool executor")
	}
	v, err := a.Runner.Start(context.Background(), "t", durable.StartRequest{Agent: "a", Messages: []core.Message{{Role: "user", Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if sends == 0 {
		t.Error("the queue wrapper saw no send")
	}
	if _, err := a.Runner.Get(context.Background(), "t", v.State.RunID); err != nil {
		t.Fatal(err)
	}
	if loads == 0 {
		t.Error("the store wrapper saw no load")
	}
	if v.State.RunID != "r-1" || !v.State.CreatedAt.Equal(clock.T) {
		t.Errorf("run id %q created %v: the injected IDs and clock were not used", v.State.RunID, v.State.CreatedAt)
	}
}

func TestPutToken(t *testing.T) {
	a, err := Build(context.Background(), Config{Stores: Stores{Memory: true}, Agents: Agents{JSON: agentsJSON("a")}}, Deps{Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := a.PutToken(ctx, Token{Token: "tok-all-scopes", Tenant: "acme"}); err != nil {
		t.Fatal(err)
	}
	got, err := a.Tokens.LookupToken(ctx, httpapi.HashToken("tok-all-scopes"))
	if err != nil || got.Tenant != "acme" || got.Label != "acme" || len(got.Scopes) != len(Scopes()) {
		t.Fatalf("default scopes and label: %+v %v", got, err)
	}
	if err := a.PutToken(ctx, Token{Token: "tok-read", Tenant: "acme", Label: "ci", Scopes: []string{httpapi.ScopeRunsRead}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Tokens.LookupToken(ctx, httpapi.HashToken("tok-read")); got.Label != "ci" || len(got.Scopes) != 1 {
		t.Fatalf("explicit scopes and label: %+v", got)
	}
	// Extra scopes outside the API's namespaces are kept as they are.
	if err := a.PutToken(ctx, Token{Token: "tok-crm", Tenant: "acme", Scopes: []string{httpapi.ScopeRunsWrite, "crm:write", "billing.read"}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Tokens.LookupToken(ctx, httpapi.HashToken("tok-crm")); strings.Join(got.Scopes, " ") != "runs:write crm:write billing.read" {
		t.Fatalf("extra scopes: %+v", got)
	}
	for _, bad := range []struct{ scope, want string }{
		{"runs:everything", `unknown API scope "runs:everything"`},
		{"approvals:grant", `unknown API scope "approvals:grant"`},
		{"crm write", `scope "crm write" is not a valid scope name`},
		{"*", `scope "*" is not a valid scope name`},
		{"", `scope "" is not a valid scope name`},
	} {
		if err := a.PutToken(ctx, Token{Token: "tok-bad", Tenant: "acme", Scopes: []string{bad.scope}}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("scope %q: %v, want %q", bad.scope, err, bad.want)
		}
	}
}

func TestValidate(t *testing.T) {
	base := Config{Stores: Stores{Memory: true}}.WithDefaults()
	for _, c := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"external without table", func(c *Config) { c.Stores = Stores{QueueURL: "q"} }, "BATON_TABLE is required"},
		{"external without queue", func(c *Config) { c.Stores = Stores{Table: "t"} }, "BATON_QUEUE_URL is required"},
		{"body over Lambda's limit", func(c *Config) { c.MaxBody = 7_000_000 }, "6 MB"},
		{"negative lease", func(c *Config) { c.IntentLease = -1 }, "must be positive"},
		{"sub-second visibility", func(c *Config) { c.Stores.Visibility = 1 }, "at least 1s"},
	} {
		cfg := base
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := Build(context.Background(), Config{Stores: Stores{Table: "t"}}, Deps{Log: quiet}); err == nil {
		t.Error("Build accepted an invalid config")
	}
}
