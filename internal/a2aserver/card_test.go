package a2aserver_test

import (
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/baton-agents/baton/internal/a2aserver"
	"github.com/baton-agents/baton/internal/agents"
)

// TestCard: an agent's card describes it by its A2A description, else its
// label, else its slug; it names the bearer scheme, and the OIDC one
// only when the deployment trusts an issuer; push notifications only
// for an agent that takes callbacks.
func TestCard(t *testing.T) {
	reg, err := agents.Parse([]byte(`{"agents":[
 {"slug":"described","label":"Label","model":{"provider":"scripted"},"a2a":{"enabled":true,"description":"Described.","version":"2.0.0",
  "skills":[{"id":"s","name":"S","description":"Does s.","tags":["t"]}]},
  "allow_overrides":["callback"],"callback":{"secret_env":"A2A_CARD_SECRET"},"callback_hosts":["example.com"]},
 {"slug":"labelled","label":"Label","model":{"provider":"scripted"},"a2a":{"enabled":true}},
 {"slug":"bare","model":{"provider":"scripted"},"a2a":{"enabled":true}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		slug, desc string
		oidc       string
		push       bool
	}{
		{"described", "Described.", "https://issuer.example.com/.well-known/openid-configuration", true},
		{"labelled", "Label", "", false},
		{"bare", "The Baton agent bare.", "", false},
	} {
		a, ok := reg.Get(tc.slug)
		if !ok {
			t.Fatalf("no agent %s", tc.slug)
		}
		card := a2aserver.Card(a, "https://baton.example.com/a2a/"+tc.slug, a2aserver.Security{OIDCDiscovery: tc.oidc})
		if card.Name != tc.slug || card.Description != tc.desc || card.Capabilities.PushNotifications != tc.push || !card.Capabilities.Streaming {
			t.Errorf("%s: card %+v", tc.slug, card)
		}
		_, hasOIDC := card.SecuritySchemes["oidc"]
		if _, bearer := card.SecuritySchemes["bearer"]; !bearer || hasOIDC != (tc.oidc != "") || len(card.SecurityRequirements) != map[bool]int{true: 2, false: 1}[hasOIDC] {
			t.Errorf("%s: schemes %v, requirements %v", tc.slug, card.SecuritySchemes, card.SecurityRequirements)
		}
		if tc.slug == "described" && (card.Version != "2.0.0" || len(card.Skills) != 1 || card.Skills[0].Tags[0] != "t") {
			t.Errorf("%s: version %s, skills %+v", tc.slug, card.Version, card.Skills)
		}
		if tc.slug == "bare" && (card.Version != "1.0.0" || len(card.Skills) != 0 || card.SupportedInterfaces[0].URL != "https://baton.example.com/a2a/bare" || card.SupportedInterfaces[0].ProtocolBinding != a2a.TransportProtocolJSONRPC) {
			t.Errorf("%s: version %s, skills %+v, interfaces %+v", tc.slug, card.Version, card.Skills, card.SupportedInterfaces[0])
		}
	}
}

// TestMethodKinds: which methods stream, which only read, and a body's
// method.
func TestMethodKinds(t *testing.T) {
	for m, want := range map[string][2]bool{
		"SendStreamingMessage": {true, false}, "SubscribeToTask": {true, true}, "SendMessage": {false, false},
		"GetTask": {false, true}, "ListTasks": {false, true}, "CancelTask": {false, false},
		"GetTaskPushNotificationConfig": {false, true}, "ListTaskPushNotificationConfigs": {false, true},
		"CreateTaskPushNotificationConfig": {false, false}, "GetExtendedAgentCard": {false, true},
	} {
		if got := [2]bool{a2aserver.Streaming(m), a2aserver.ReadMethod(m)}; got != want {
			t.Errorf("%s: streaming, read %v, want %v", m, got, want)
		}
	}
	for body, want := range map[string]string{`{"method":"GetTask"}`: "GetTask", `{"method":7}`: "", `[]`: "", ``: ""} {
		if got := a2aserver.Method([]byte(body)); got != want {
			t.Errorf("Method(%s) = %q, want %q", body, got, want)
		}
	}
}
