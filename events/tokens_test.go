package events_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/internal/app"
)

// TestStreamedTokensSatisfySchema streams a run whose scripted model
// streams its text and reasoning in chunks, and checks every token and
// thinking event against token-event.schema.json.
func TestStreamedTokensSatisfySchema(t *testing.T) {
	a := sampleApp(t)
	auth := map[string]string{"Authorization": "Bearer sample-token-0000001"}
	resp, _ := a.API.Handle(context.Background(), events.APIGatewayProxyRequest{HTTPMethod: "POST", Path: "/v1/runs", Headers: auth,
		Body: `{"agent":"demo","messages":[{"role":"user","content":"hi"}],"model":{"provider":"scripted","options":{"chunk_chars":5},
		"turns":[{"content":"Hello there, how can I help?","thinking":"The user greets me."}]}}`})
	var view map[string]any
	if err := json.Unmarshal([]byte(resp.Body), &view); err != nil || resp.StatusCode != 202 {
		t.Fatalf("start: %d %s", resp.StatusCode, resp.Body)
	}
	_, body := a.API.Stream(context.Background(), events.APIGatewayProxyRequest{HTTPMethod: "GET", Path: "/v1/runs/" + view["run_id"].(string) + "/stream", Headers: auth})
	if body == nil {
		t.Fatal("no stream")
	}
	pr, pw := io.Pipe()
	go func() { _ = pw.CloseWithError(body(context.Background(), pw, func() {})) }()
	// The stream follows deltas from the turn in flight at its first
	// poll: wait for that poll's first event before the worker runs the
	// turn.
	br := bufio.NewReader(pr)
	first, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	ds, _ := a.Steps.Receive(context.Background(), 10, 0)
	var ev events.SQSEvent
	for _, d := range ds {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: d.MessageID, ReceiptHandle: d.ReceiptHandle, Body: string(d.Body), Attributes: map[string]string{"ApproximateReceiveCount": "1"}})
	}
	if _, err := a.Worker.Handle(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte(first), rest...)
	s := schema(t, "token-event")
	kinds := map[string]int{}
	for _, block := range strings.Split(strings.TrimSuffix(string(out), "\n\n"), "\n\n") {
		fields := map[string]string{}
		for _, line := range strings.Split(block, "\n") {
			k, v, _ := strings.Cut(line, ": ")
			fields[k] = v
		}
		if fields["event"] != "token" && fields["event"] != "thinking" {
			continue
		}
		if _, ok := fields["id"]; ok {
			t.Fatalf("a delta with an id: %q", block)
		}
		if err := s.Validate(decode(t, []byte(fields["data"]))); err != nil {
			t.Fatalf("delta %q: %v", block, err)
		}
		kinds[fields["event"]]++
	}
	if kinds["token"] != 6 || kinds["thinking"] != 4 {
		t.Fatalf("deltas by kind %v in %s", kinds, out)
	}
}

// sampleApp builds the demo agents on the embedded stores, with the
// samples' API token.
func sampleApp(t *testing.T) *app.App {
	t.Helper()
	b, err := os.ReadFile("../cmd/baton/agents.demo.json")
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Build(context.Background(), app.Config{Stores: app.Stores{Memory: true, Visibility: time.Minute}, Agents: app.Agents{Bytes: b},
		Providers: []string{"scripted"}, ExecuteTools: true}, app.Deps{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.PutToken(context.Background(), app.Token{Token: "sample-token-0000001", Tenant: "sample"}); err != nil {
		t.Fatal(err)
	}
	return a
}
