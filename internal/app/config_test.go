package app

import (
	"strings"
	"testing"
	"time"
)

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{"BATON_TABLE": "t", "BATON_QUEUE_URL": "http://q", "BATON_PROVIDERS": "scripted, bedrock", "BATON_STALL_AFTER": "90s", "BATON_CORS_ORIGINS": "https://app.example.com, http://localhost:5173"}
	c, err := ConfigFromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil || c.Validate() != nil {
		t.Fatal(err, c.Validate())
	}
	if len(c.Providers) != 2 || c.StallAfter != 90*time.Second || c.MaxBody != 5<<20 || c.Agents.File != "agents.json" || len(c.CORSOrigins) != 2 || c.CORSOrigins[1] != "http://localhost:5173" {
		t.Fatalf("%+v", c)
	}
	for k, want := range map[string]string{"BATON_MAX_BODY_BYTES": "positive integer", "BATON_STALL_AFTER": "BATON_STALL_AFTER"} {
		bad := map[string]string{k: "nope"}
		_, err := ConfigFromEnv(func(k string) (string, bool) { v, ok := bad[k]; return v, ok })
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s=nope: %v", k, err)
		}
	}
	if err := (Config{Stores: Stores{QueueURL: "q"}, StallAfter: 1, IntentLease: 1}).Validate(); err == nil {
		t.Error("missing table accepted")
	}
	if err := (Config{Stores: Stores{Memory: true}}).WithDefaults().Validate(); err != nil {
		t.Errorf("embedded stores with defaults: %v", err)
	}
}
