package config

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config is the deployed functions' configuration.
type Config struct {
	Table       string        // BATON_TABLE (required)
	QueueURL    string        // BATON_QUEUE_URL (required for api and worker)
	Region      string        // AWS_REGION
	AgentsFile  string        // BATON_AGENTS_FILE (default agents.json beside the binary)
	AgentsJSON  string        // BATON_AGENTS_JSON (inline, wins over the file)
	Providers   []string      // BATON_PROVIDERS, comma-separated model providers to enable
	MaxBody     int           // BATON_MAX_BODY_BYTES (default 5 MiB)
	StallAfter  time.Duration // BATON_STALL_AFTER (default 2m)
	IntentLease time.Duration // BATON_INTENT_LEASE (default 5m)
	MaxReceives int           // BATON_MAX_RECEIVES (default 5; match the queue's redrive policy)
	LogLevel    string        // LOG_LEVEL (default info)
}

// FromEnv reads the configuration with lookup (os.LookupEnv in
// production).
func FromEnv(lookup func(string) (string, bool)) (Config, error) {
	get := func(k, def string) string {
		if v, ok := lookup(k); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
		return def
	}
	c := Config{
		Table: get("BATON_TABLE", ""), QueueURL: get("BATON_QUEUE_URL", ""), Region: get("AWS_REGION", ""),
		AgentsFile: get("BATON_AGENTS_FILE", "agents.json"), AgentsJSON: get("BATON_AGENTS_JSON", ""),
		LogLevel: get("LOG_LEVEL", "info"),
	}
	for _, p := range strings.Split(get("BATON_PROVIDERS", ""), ",") {
		if p = strings.TrimSpace(p); p != "" {
			c.Providers = append(c.Providers, p)
		}
	}
	var err error
	if c.MaxBody, err = intEnv(get("BATON_MAX_BODY_BYTES", "5242880")); err != nil {
		return c, fmt.Errorf("BATON_MAX_BODY_BYTES: %w", err)
	}
	if c.MaxReceives, err = intEnv(get("BATON_MAX_RECEIVES", "5")); err != nil {
		return c, fmt.Errorf("BATON_MAX_RECEIVES: %w", err)
	}
	if c.StallAfter, err = time.ParseDuration(get("BATON_STALL_AFTER", "2m")); err != nil {
		return c, fmt.Errorf("BATON_STALL_AFTER: %w", err)
	}
	if c.IntentLease, err = time.ParseDuration(get("BATON_INTENT_LEASE", "5m")); err != nil {
		return c, fmt.Errorf("BATON_INTENT_LEASE: %w", err)
	}
	return c, nil
}

// Load reads the process environment.
func Load() (Config, error) {
	c, err := FromEnv(os.LookupEnv)
	if err != nil {
		return c, err
	}
	return c, c.Validate()
}

func intEnv(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("want a positive integer, got %q", s)
	}
	return n, nil
}

// Validate checks required settings.
func (c Config) Validate() error {
	if c.Table == "" {
		return fmt.Errorf("BATON_TABLE is required")
	}
	if c.QueueURL == "" {
		return fmt.Errorf("BATON_QUEUE_URL is required")
	}
	if c.MaxBody > 6_000_000 {
		return fmt.Errorf("BATON_MAX_BODY_BYTES must stay under Lambda's 6 MB payload limit")
	}
	if c.StallAfter <= 0 || c.IntentLease <= 0 {
		return fmt.Errorf("BATON_STALL_AFTER and BATON_INTENT_LEASE must be positive")
	}
	return nil
}
