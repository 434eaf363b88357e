//go:build e2e

package tests

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/baton-agents/baton/events"
)

// TestOpenAPIServed: baton dev serves the OpenAPI document without a
// credential, and interrupts a run through the API. (Every exchange of
// the suite is checked against the document: TestMain.)
func TestOpenAPIServed(t *testing.T) {
	d := startDev(t, devArgs(t))
	resp, err := http.Get(d.base + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !bytes.Equal(b, events.OpenAPI) {
		t.Fatalf("GET /v1/openapi.json: %d %.200s", resp.StatusCode, b)
	}
	// An interrupt through the API (the CLI's are checked by their own
	// tests, in another process).
	paused := `{"agent":"e2e","messages":[{"role":"user","content":"look it up"}],
	  "tools":[{"name":"client/lookup","description":"Look up.","parameters":{"type":"object"}}],
	  "model":{"provider":"scripted","turns":[{"tool_calls":[{"id":"c1","name":"client/lookup","parameters":{}}]},{"content":"Done."}]}}`
	id := start(t, d, paused)
	d.waitStatus(t, id)
	if r := d.call(t, "POST", "/v1/runs/"+id+"/interrupt", tokAcme, `{"action":"handoff","reason":"a person takes over"}`); r.status != 202 || r.body["status"] != "interrupted" {
		t.Fatalf("interrupt: %d %v", r.status, r.body)
	}
}
