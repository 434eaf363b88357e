package app

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// TestStartHint: baton dev's start-up hint starts a run of the first
// agent of the file actually loaded, with a scripted reply only where
// the agent allows a model override; the API accepts the hint's body.
func TestStartHint(t *testing.T) {
	for _, tc := range []struct {
		name, agents, wantAgent string
		wantModel               bool
	}{
		{"first of several, no overrides", `{"agents":[{"slug":"support","model":{"provider":"scripted","turns":[{"content":"hi"}]}},{"slug":"demo","model":{"provider":"scripted"},"allow_overrides":["model"]}]}`, "support", false},
		{"overrides allowed", `{"agents":[{"slug":"helper","model":{"provider":"scripted"},"allow_overrides":["model"]}]}`, "helper", true},
		{"a script of its own", `{"agents":[{"slug":"demo","model":{"provider":"scripted","turns":[{"content":"hi"}]},"allow_overrides":["model"]}]}`, "demo", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Build(context.Background(), Config{Stores: Stores{Memory: true}, Agents: Agents{JSON: tc.agents}, Providers: []string{ProviderScripted}}, Deps{Log: quiet})
			if err != nil {
				t.Fatal(err)
			}
			if err := a.PutToken(context.Background(), Token{Token: "tok-hint-0001", Tenant: "t"}); err != nil {
				t.Fatal(err)
			}
			agent, body := a.StartHint()
			if agent != tc.wantAgent || strings.Contains(string(body), `"model"`) != tc.wantModel {
				t.Fatalf("hint for %s: %s", agent, body)
			}
			resp, _ := a.API.Handle(context.Background(), events.APIGatewayProxyRequest{HTTPMethod: "POST", Path: "/v1/runs",
				Headers: map[string]string{"Authorization": "Bearer tok-hint-0001"}, Body: string(body)})
			if resp.StatusCode != 202 {
				t.Fatalf("the hint's body: %d %s", resp.StatusCode, resp.Body)
			}
		})
	}
}
