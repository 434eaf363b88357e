package app

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// TestAPILambdaRoutes: the stream route is streamed unless the stream
// transfer is BUFFERED; other routes are always buffered.
func TestAPILambdaRoutes(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{"", StreamTransferStream, StreamTransferBuffered} {
		a, err := Build(ctx, Config{Stores: Stores{Memory: true}, Agents: Agents{JSON: agentsJSON("a")}, StreamTransfer: mode,
			Tokens: []Token{{Token: "tok-lambda-123", Tenant: "acme"}}}, Deps{Log: quiet})
		if err != nil {
			t.Fatal(err)
		}
		invoke := func(path string) (int, bool) {
			t.Helper()
			ev := events.APIGatewayProxyRequest{HTTPMethod: "GET", Path: path, Headers: map[string]string{"Authorization": "Bearer tok-lambda-123"}}
			b, _ := json.Marshal(ev)
			resp, err := a.apiLambda().Invoke(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Stream != nil {
				return 0, true
			}
			var pr events.APIGatewayProxyResponse
			if err := json.Unmarshal(resp.Payload, &pr); err != nil {
				t.Fatal(err)
			}
			return pr.StatusCode, false
		}
		// 404, not 401: the configured token is stored.
		if st, streamed := invoke("/v1/runs/r-00000000000000000000000001/events"); streamed || st != 404 {
			t.Errorf("%q: GET events: %d streamed=%v", mode, st, streamed)
		}
		if _, streamed := invoke("/v1/runs/r-00000000000000000000000001/stream"); streamed != (mode != StreamTransferBuffered) {
			t.Errorf("%q: stream route streamed=%v", mode, streamed)
		}
	}
}

func TestMemoryStoresFromEnv(t *testing.T) {
	env := map[string]string{"BATON_STORES": "memory", "BATON_DEV_TOKENS": "acme=tok-acme-123, globex=tok-globex-1", "BATON_STREAM_TRANSFER": "buffered"}
	c, err := ConfigFromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil || c.WithDefaults().Validate() != nil {
		t.Fatal(err, c.WithDefaults().Validate())
	}
	if !c.Stores.Memory || len(c.Tokens) != 2 || c.Tokens[1].Token != "tok-globex-1" || c.Tokens[1].Tenant != "globex" || c.StreamTransfer != StreamTransferBuffered {
		t.Fatalf("%+v", c)
	}
	for k, v := range map[string]string{"BATON_STORES": "dynamo", "BATON_DEV_TOKENS": "acme=short", "BATON_STREAM_TRANSFER": "chunked"} {
		bad := map[string]string{"BATON_STORES": "memory", k: v}
		c, err := ConfigFromEnv(func(k string) (string, bool) { v, ok := bad[k]; return v, ok })
		if err == nil {
			err = c.WithDefaults().Validate()
		}
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
	if err := (Config{Stores: Stores{Table: "t", QueueURL: "q"}, Tokens: []Token{{Token: "tok-acme-123", Tenant: "acme"}}}).WithDefaults().Validate(); err == nil {
		t.Error("configured tokens accepted for a table")
	}
}
