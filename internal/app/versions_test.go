package app

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/durable"
)

// retiredFile declares a tool whose Go handler ("retired") an older build
// registered and this one does not.
const retiredFile = `{"agents":[{"slug":"a","system":"old","model":{"provider":"scripted","turns":[
  {"tool_calls":[{"id":"c1","name":"ability/old","parameters":{}}]},{"content":"done"}]},
  "tools":[{"name":"ability/old","source":"go","description":"Old.","parameters":{"type":"object"},"executor":{"type":"go","handler":"retired"}}]}]}`

// TestVersionWithoutItsGoHandler: a run of a stored version whose Go
// handler is no longer in the build fails that call with an error naming
// the version and the handler, and the run goes on consistently; the
// deployment's own file with such a tool does not load at all.
func TestVersionWithoutItsGoHandler(t *testing.T) {
	ctx := context.Background()
	a, err := Build(ctx, Config{Stores: Stores{Memory: true}, Agents: Agents{JSON: agentsJSON("a")}, Providers: []string{ProviderScripted}, ExecuteTools: true}, Deps{Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	old, _, err := agents.NewVersion([]byte(retiredFile), time.Now(), "an older build")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Store.PutAgentVersion(ctx, old); err != nil {
		t.Fatal(err)
	}
	snap, err := a.Runner.Start(ctx, "t", durable.StartRequest{Agent: "a", Version: old.ID, Messages: []core.Message{{Role: core.RoleUser, Content: "go"}}})
	if err == nil || !strings.Contains(err.Error(), "agent_version") {
		t.Fatalf("the bundled agent does not allow agent_version: %v", err)
	}
	cur, _ := a.Store.GetAgentAlias(ctx, core.DefaultAlias)
	if _, err := a.Store.PutAgentAlias(ctx, core.AgentAlias{Name: core.DefaultAlias, Routes: []core.AliasRoute{{Version: old.ID, Weight: 100}}, Deployed: cur.Deployed}, cur.Revision); err != nil {
		t.Fatal(err)
	}
	if snap, err = a.Runner.Start(ctx, "t", durable.StartRequest{Agent: "a", Messages: []core.Message{{Role: core.RoleUser, Content: "go"}}}); err != nil {
		t.Fatal(err)
	}
	drainSteps(t, a)
	if snap, err = a.Runner.Get(ctx, "t", snap.State.RunID); err != nil {
		t.Fatal(err)
	}
	v, err := a.Runner.View(ctx, snap, 0)
	if err != nil {
		t.Fatal(err)
	}
	res := v.Result.ToolExecutionResults
	want := "agent version " + old.ID + `: tool ability/old of agent a needs the Go handler "retired", which this build does not register`
	if v.Status != core.StatusCompleted || v.AgentVersion != old.ID || len(res) != 1 || res[0].Result.Success || !strings.Contains(res[0].Result.Error, want) {
		t.Fatalf("status %s on %s, results %+v; want the call failed with %q", v.Status, v.AgentVersion, res, want)
	}
	if _, err := Build(ctx, Config{Stores: Stores{Memory: true}, Agents: Agents{JSON: retiredFile}, Providers: []string{ProviderScripted}, ExecuteTools: true}, Deps{Log: quiet}); err == nil || !strings.Contains(err.Error(), `no Go handler named "retired"`) {
		t.Fatalf("the deployment's own file with an unknown handler: %v", err)
	}
}

// TestDeployPointsDefault: a deploy (a build with a new bundled file)
// publishes it and points default at it; a cold start of the same
// deployment leaves an alias moved through the API alone; redeploying
// an earlier file points default back at it.
func TestDeployPointsDefault(t *testing.T) {
	ctx := context.Background()
	var shared durable.Store
	build := func(file string) *App {
		t.Helper()
		a, err := Build(ctx, Config{Stores: Stores{Memory: true}, Agents: Agents{JSON: file}, Providers: []string{ProviderScripted}}, Deps{Log: quiet,
			WrapStore: func(s durable.Store) durable.Store {
				if shared == nil {
					shared = s
				}
				return shared
			}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	def := func() core.AgentAlias {
		al, err := shared.GetAgentAlias(ctx, core.DefaultAlias)
		if err != nil {
			t.Fatal(err)
		}
		return al
	}
	a1 := build(agentsJSON("one"))
	if al := def(); al.Routes[0].Version != a1.AgentVersion || al.Deployed != a1.AgentVersion || al.UpdatedBy != "deploy" {
		t.Fatalf("first deploy: %+v", al)
	}
	a2 := build(agentsJSON("two"))
	if def().Routes[0].Version != a2.AgentVersion || a2.AgentVersion == a1.AgentVersion {
		t.Fatalf("second deploy: %+v", def())
	}
	rb := def()
	rb.Routes = []core.AliasRoute{{Version: a1.AgentVersion, Weight: 100}}
	if _, err := shared.PutAgentAlias(ctx, rb, rb.Revision); err != nil {
		t.Fatal(err)
	}
	build(agentsJSON("two")) // a cold start of the same deployment
	if def().Routes[0].Version != a1.AgentVersion {
		t.Fatalf("a cold start undid the rollback: %+v", def())
	}
	build(agentsJSON("one"))
	if al := def(); al.Routes[0].Version != a1.AgentVersion || al.Deployed != a1.AgentVersion {
		t.Fatalf("redeploying the first file: %+v", al)
	}
	if vs, _ := shared.ListAgentVersions(ctx); len(vs) != 2 {
		t.Fatalf("versions %+v", vs)
	}
}

type countingVersions struct {
	core.AgentVersionStore
	mu   sync.Mutex
	gets int
}

func (c *countingVersions) GetAgentVersion(ctx context.Context, id string) (core.AgentVersion, error) {
	c.mu.Lock()
	c.gets++
	c.mu.Unlock()
	return c.AgentVersionStore.GetAgentVersion(ctx, id)
}

// TestCatalogBuildsAVersionOnce: runs that need a version at once wait
// for one build and share it; an unknown version is an error each time.
func TestCatalogBuildsAVersionOnce(t *testing.T) {
	ctx := context.Background()
	a, err := Build(ctx, Config{Stores: Stores{Memory: true}, Agents: Agents{JSON: agentsJSON("a")}, Providers: []string{ProviderScripted}, ExecuteTools: true}, Deps{Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	v, _, _ := agents.NewVersion([]byte(agentsJSON("b")), time.Now(), "t")
	if _, _, err := a.Store.PutAgentVersion(ctx, v); err != nil {
		t.Fatal(err)
	}
	cv := &countingVersions{AgentVersionStore: a.Store}
	c := a.opts.Versions.(*catalog)
	c.store = cv
	var wg sync.WaitGroup
	got := make([]*durable.Version, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _ = c.Load(ctx, v.ID)
		}()
	}
	wg.Wait()
	for _, g := range got {
		if g == nil || g != got[0] || g.ID != v.ID {
			t.Fatalf("loads %v", got)
		}
	}
	if _, ok := got[0].Agents.Get("b"); !ok || cv.gets != 1 {
		t.Fatalf("agents %v, %d store reads", got[0].Agents.Slugs(), cv.gets)
	}
	if boot, _ := c.Load(ctx, ""); boot.ID != a.AgentVersion {
		t.Fatalf("the deployment's own version: %s", boot.ID)
	}
	for range 2 {
		if _, err := c.Load(ctx, "av_0000000000000000"); !errors.Is(err, core.ErrNotFound) {
			t.Fatalf("unknown version: %v", err)
		}
	}
}

// TestVersionWithoutItsProvider: a run of a stored version whose model
// provider this deployment does not enable fails with an error naming
// the provider and the version.
func TestVersionWithoutItsProvider(t *testing.T) {
	ctx := context.Background()
	a, err := Build(ctx, Config{Stores: Stores{Memory: true}, Agents: Agents{JSON: agentsJSON("a")}, Providers: []string{ProviderScripted}, ExecuteTools: true}, Deps{Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	old, _, err := agents.NewVersion([]byte(`{"agents":[{"slug":"a","model":{"provider":"anthropic","model":"claude-x"}}]}`), time.Now(), "an older deployment")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Store.PutAgentVersion(ctx, old); err != nil {
		t.Fatal(err)
	}
	cur, _ := a.Store.GetAgentAlias(ctx, core.DefaultAlias)
	if _, err := a.Store.PutAgentAlias(ctx, core.AgentAlias{Name: core.DefaultAlias, Routes: []core.AliasRoute{{Version: old.ID, Weight: 100}}}, cur.Revision); err != nil {
		t.Fatal(err)
	}
	snap, err := a.Runner.Start(ctx, "t", durable.StartRequest{Agent: "a", Messages: []core.Message{{Role: core.RoleUser, Content: "go"}}})
	if err != nil {
		t.Fatal(err)
	}
	drainSteps(t, a)
	if snap, err = a.Runner.Get(ctx, "t", snap.State.RunID); err != nil {
		t.Fatal(err)
	}
	want := `model provider "anthropic" is not enabled (the run's agent version ` + old.ID + ` names it)`
	if snap.State.Status != core.StatusFailed || snap.State.Error == nil || !strings.Contains(snap.State.Error.Message, want) {
		t.Fatalf("status %s, error %+v; want failed with %q", snap.State.Status, snap.State.Error, want)
	}
}
