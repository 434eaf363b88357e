package events_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/httpapi"
	"github.com/baton-agents/baton/internal/worker"
)

func schema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	s, err := c.Compile(filepath.Join("schemas", name+".schema.json"))
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	return s
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func canonical(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// roundTrip reads the sample at path into a T and fails the test unless
// the T marshals back to the same JSON.
func roundTrip[T any](t *testing.T, path string) T {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	back, _ := json.Marshal(v)
	if canonical(t, back) != canonical(t, raw) {
		t.Fatalf("sample %s does not round-trip through %T:\n%s\n%s", path, v, canonical(t, raw), canonical(t, back))
	}
	return v
}

var bodySchema = map[string]string{
	"start-run.json": "start-run", "submit-result.json": "tool-result", "approve.json": "approval",
	"cancel.json": "cancel", "steer.json": "steer",
}

func newAPI(t *testing.T) (*httpapi.API, *worker.Worker) {
	t.Helper()
	b, err := os.ReadFile("../cmd/baton/agents.demo.json")
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Build(context.Background(), app.Config{Stores: app.Stores{Memory: true, Visibility: time.Minute}, Agents: app.Agents{Bytes: b},
		Providers: []string{"scripted"}, ExecuteTools: true},
		app.Deps{Clock: &core.FixedClock{T: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.PutToken(context.Background(), app.Token{Token: "sample-token-0000001", Tenant: "sample"}); err != nil {
		t.Fatal(err)
	}
	return a.API, a.Worker
}

// TestAPISamples: every sample round-trips through the Lambda event type,
// its body satisfies its schema, and the handler answers it as expected.
func TestAPISamples(t *testing.T) {
	api, _ := newAPI(t)
	errSchema := schema(t, "error")
	files, _ := filepath.Glob("api/*.json")
	if len(files) != 8 {
		t.Fatalf("want a sample per route (8), have %d", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			req := roundTrip[events.APIGatewayProxyRequest](t, f)
			if name, ok := bodySchema[filepath.Base(f)]; ok {
				if err := schema(t, name).Validate(decode(t, []byte(req.Body))); err != nil {
					t.Fatalf("body does not satisfy %s: %v", name, err)
				}
			}
			resp, _ := api.Handle(context.Background(), req)
			want := 404 // the sample run does not exist in a fresh store
			if filepath.Base(f) == "start-run.json" {
				want = 202
			}
			if resp.StatusCode != want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, want, resp.Body)
			}
			if resp.StatusCode >= 400 {
				if err := errSchema.Validate(decode(t, []byte(resp.Body))); err != nil {
					t.Fatalf("error body does not satisfy the error schema: %v", err)
				}
			}
		})
	}
}

// TestSchemasAgreeWithHandler: bodies the schema rejects, the handler
// rejects too.
func TestSchemasAgreeWithHandler(t *testing.T) {
	api, _ := newAPI(t)
	raw, _ := os.ReadFile("api/start-run.json")
	var base events.APIGatewayProxyRequest
	_ = json.Unmarshal(raw, &base)
	bad := []string{
		`{"agent":"demo","messages":[{"role":"user","content":"x"}],"colour":"red"}`,
		`{"agent":"demo","messages":[]}`,
		`{"messages":[{"role":"user","content":"x"}]}`,
		`{"agent":"demo","messages":[{"role":"user","content":"x"}],"tools":[{"name":"ability/x","description":"d"}]}`,
		`{"agent":"demo","messages":[{"role":"user","content":"x"}],"budgets":{"dollars":5}}`,
		`{"agent":"demo","messages":[{"role":"user","content":"x"}],"max_turns":0}`,
	}
	s := schema(t, "start-run")
	for _, body := range bad {
		if err := s.Validate(decode(t, []byte(body))); err == nil {
			t.Errorf("schema accepts %s", body)
		}
		req := base
		req.Headers = map[string]string{"Authorization": "Bearer sample-token-0000001"}
		req.MultiValueHeaders = nil
		req.Body = body
		resp, _ := api.Handle(context.Background(), req)
		if resp.StatusCode != 400 {
			t.Errorf("handler answers %d to %s", resp.StatusCode, body)
		}
	}
}

func TestSQSSample(t *testing.T) {
	_, w := newAPI(t)
	ev := roundTrip[events.SQSEvent](t, "sqs/step-batch.json")
	step := schema(t, "step")
	for _, r := range ev.Records {
		if err := step.Validate(decode(t, []byte(r.Body))); err != nil {
			t.Fatalf("step body: %v", err)
		}
		if !strings.Contains(r.Attributes["MessageDeduplicationId"], ":") {
			t.Fatal("dedup id is run:seq")
		}
	}
	resp, _ := w.Handle(context.Background(), ev)
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("a step for an unknown run must be acknowledged, got %v", resp.BatchItemFailures)
	}
	for _, bad := range []string{`{"kind":"model_turn","v":2,"run_id":"r","seq":1}`, `{"kind":"nap","v":1,"run_id":"r","seq":1}`, `{"kind":"model_turn","v":1,"run_id":"r","seq":1,"payload":"x"}`} {
		if err := step.Validate(decode(t, []byte(bad))); err == nil {
			t.Errorf("step schema accepts %s", bad)
		}
	}
}
