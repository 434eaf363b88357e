package app

import (
	"strings"
	"testing"
	"time"
)

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{"BATON_TABLE": "t", "BATON_QUEUE_URL": "http://q", "BATON_PROVIDERS": "scripted, bedrock", "BATON_STALL_AFTER": "90s", "BATON_STEP_VISIBILITY": "720s", "BATON_CORS_ORIGINS": "https://app.example.com, http://localhost:5173"}
	c, err := ConfigFromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil || c.Validate() != nil {
		t.Fatal(err, c.Validate())
	}
	if len(c.Providers) != 2 || c.StallAfter != 90*time.Second || c.MaxBody != 5<<20 || c.Agents.File != "agents.json" || len(c.CORSOrigins) != 2 || c.CORSOrigins[1] != "http://localhost:5173" || c.stepVisibility() != 720*time.Second {
		t.Fatalf("%+v", c)
	}
	if v := (Config{Stores: Stores{QueueURL: "q"}}).WithDefaults().stepVisibility(); v != 0 {
		t.Errorf("the visibility of a queue the process did not create is unknown, got %v", v)
	}
	for k, want := range map[string]string{"BATON_MAX_BODY_BYTES": "positive integer", "BATON_STALL_AFTER": "BATON_STALL_AFTER", "BATON_STEP_VISIBILITY": "BATON_STEP_VISIBILITY"} {
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
