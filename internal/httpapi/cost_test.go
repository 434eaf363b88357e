package httpapi_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/app"
)

// newPricedEnv is newEnv with a prices file (BATON_PRICES) that prices
// the scripted model m1 at $1 per million prompt and $2 per million
// completion tokens.
func newPricedEnv(t *testing.T) *env {
	t.Helper()
	path := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(path, []byte(`{"models":{"scripted/m1":{"input":1,"output":2}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	clock := &core.FixedClock{T: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)}
	lookup := func(k string) (string, bool) {
		if k == "BATON_PRICES" {
			return path, true
		}
		return "", false
	}
	a, err := app.Build(context.Background(), app.Config{Stores: app.Stores{Memory: true, Visibility: time.Minute}, Agents: app.Agents{JSON: agentsJSON},
		Providers: []string{"scripted"}, ExecuteTools: true, MaxBody: 64 << 10, Env: lookup}, app.Deps{Clock: clock, IDs: &core.SequentialIDs{}, Log: discard})
	if err != nil {
		t.Fatal(err)
	}
	_ = a.PutToken(context.Background(), app.Token{Token: "tok-acme-123", Tenant: "acme"})
	return &env{api: a.API, q: a.Steps, eng: a.Runner, clock: clock}
}

const pricedTurns = `"model":{"provider":"scripted","model":"m1","turns":[
 {"tool_calls":[{"id":"c1","name":"ability/echo","parameters":{"x":1}}],"usage":{"prompt_tokens":1000,"completion_tokens":500}},
 {"tool_calls":[{"id":"c2","name":"ability/echo","parameters":{"x":2}}],"usage":{"prompt_tokens":1000,"completion_tokens":500}},
 {"content":"done","usage":{"prompt_tokens":1000,"completion_tokens":500}}]}`

func TestCostOverHTTP(t *testing.T) {
	e := newPricedEnv(t)
	st, v, _ := e.do(t, "POST", "/v1/runs", "tok-acme-123", `{"agent":"demo","messages":[{"role":"user","content":"go"}],`+pricedTurns+`}`, nil)
	if st != 202 {
		t.Fatalf("start: %d %v", st, v)
	}
	e.pump(t)
	_, v, _ = e.do(t, "GET", "/v1/runs/"+v["run_id"].(string), "tok-acme-123", "", nil)
	res := v["result"].(map[string]any)
	c, _ := res["cost"].(map[string]any)
	// Three turns at $0.002 each; the embedded stores make no AWS
	// requests, so nothing else is counted.
	if v["status"] != "completed" || c["total_usd"] != 0.006 || c["model_usd"] != 0.006 || c["aws_usd"] != 0.0 || c["currency"] != "USD" {
		t.Fatalf("status %v cost %v", v["status"], c)
	}
	if rm := res["request_metadata"].(map[string]any)["cost"].(map[string]any); rm["total_usd"] != 0.006 {
		t.Fatalf("request_metadata.cost = %v", rm)
	}
}

func TestCostBudgetOverHTTP(t *testing.T) {
	e := newPricedEnv(t)
	st, v, _ := e.do(t, "POST", "/v1/runs", "tok-acme-123", `{"agent":"demo","messages":[{"role":"user","content":"go"}],"budgets":{"cost_usd":0.003},`+pricedTurns+`}`, nil)
	if st != 202 {
		t.Fatalf("start: %d %v", st, v)
	}
	e.pump(t)
	_, v, _ = e.do(t, "GET", "/v1/runs/"+v["run_id"].(string), "tok-acme-123", "", nil)
	res := v["result"].(map[string]any)
	if v["status"] != "budget_exceeded" || res["budget"] != "cost_usd" || res["turn_count"] != 2.0 {
		t.Fatalf("status %v budget %v turns %v", v["status"], res["budget"], res["turn_count"])
	}
	// The view shows each budget's ceiling beside what the run used.
	if b, _ := v["budgets"].([]any); len(b) != 1 || b[0].(map[string]any)["name"] != "cost_usd" || b[0].(map[string]any)["ceiling_usd"] != 0.003 || b[0].(map[string]any)["current_usd"].(float64) < 0.003 {
		t.Fatalf("budgets %v", v["budgets"])
	}
	for name, budgets := range map[string]string{
		"not a number":     `{"cost_usd":"1"}`,
		"zero":             `{"cost_usd":0}`,
		"negative":         `{"cost_usd":-1}`,
		"fractional count": `{"turns":1.5}`,
	} {
		st, b, _ := e.do(t, "POST", "/v1/runs", "tok-acme-123", `{"agent":"demo","messages":[{"role":"user","content":"go"}],"budgets":`+budgets+`}`, nil)
		if st != 400 || code(b) == "" {
			t.Errorf("%s: got %d %v, want 400", name, st, b)
		}
	}
}
