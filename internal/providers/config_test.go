package providers

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestConfigFromEnv(t *testing.T) {
	c, err := ConfigFromEnv(env(map[string]string{
		"BATON_OPENAI_API_KEY": "sk-1", "BATON_ANTHROPIC_API_KEY_SSM": "/baton/anthropic", "AWS_REGION": "eu-west-1",
		"BATON_MODEL_TIMEOUT": "45s", "BATON_MODEL_MAX_ATTEMPTS": "3",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.OpenAI.BaseURL != DefaultOpenAIBaseURL || c.OpenAI.BaseURLSet || c.OpenAI.Key.Value != "sk-1" {
		t.Errorf("openai %+v", c.OpenAI)
	}
	if c.Anthropic.BaseURL != DefaultAnthropicBaseURL || c.Anthropic.Key.SSMParameter != "/baton/anthropic" {
		t.Errorf("anthropic %+v", c.Anthropic)
	}
	if c.Bedrock.Region != "eu-west-1" || c.Timeout != 45*time.Second || c.MaxAttempts != 3 {
		t.Errorf("config %+v", c)
	}
	if err := c.Validate([]string{"openai", "anthropic", "bedrock", "scripted"}); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if r := c.Retry(); r.MaxAttempts != 3 || r.Timeout != 45*time.Second {
		t.Errorf("retry %+v", r)
	}
	for _, bad := range []map[string]string{{"BATON_MODEL_TIMEOUT": "soon"}, {"BATON_MODEL_MAX_ATTEMPTS": "0"}} {
		if _, err := ConfigFromEnv(env(bad)); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		env     map[string]string
		enabled string
		msg     string
	}{
		{map[string]string{}, "openai", "BATON_OPENAI_API_KEY"},
		{map[string]string{}, "anthropic", "BATON_ANTHROPIC_API_KEY"},
		{map[string]string{}, "bedrock", "BATON_BEDROCK_REGION"},
		{map[string]string{"BATON_OPENAI_API_KEY": "a", "BATON_OPENAI_API_KEY_SSM": "/p"}, "openai", "set only one"},
		{map[string]string{"BATON_OPENAI_BASE_URL": "ftp://x"}, "openai", "http(s) URL"},
		{map[string]string{"BATON_OPENAI_BASE_URL": "https://u:p@x"}, "openai", "must not carry credentials"},
		{map[string]string{"BATON_ANTHROPIC_API_KEY": "k", "BATON_ANTHROPIC_BASE_URL": "not a url"}, "anthropic", "http(s) URL"},
		// A self-hosted server needs no key.
		{map[string]string{"BATON_OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}, "openai", ""},
		// Providers that are not enabled are not checked.
		{map[string]string{}, "scripted", ""},
	}
	for _, tc := range cases {
		c, err := ConfigFromEnv(env(tc.env))
		if err != nil {
			t.Fatal(err)
		}
		err = c.Validate([]string{tc.enabled})
		if tc.msg == "" && err != nil || tc.msg != "" && (err == nil || !strings.Contains(err.Error(), tc.msg)) {
			t.Errorf("%v enabled %s: error %v, want %q", tc.env, tc.enabled, err, tc.msg)
		}
	}
}

func TestSecretRefNeverPrintsTheValue(t *testing.T) {
	ref := SecretRef{Var: "BATON_OPENAI_API_KEY", Value: "sk-very-secret"}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("config", "key", ref, "cfg", Config{OpenAI: HTTPConfig{Key: ref}})
	cfg := Config{OpenAI: HTTPConfig{Key: ref}}
	for _, s := range []string{fmt.Sprint(ref), fmt.Sprintf("%v %+v %#v %s", ref, ref, ref, ref), fmt.Sprintf("%v %+v", cfg, cfg), logs.String()} {
		if strings.Contains(s, "sk-very-secret") {
			t.Errorf("value printed: %s", s)
		}
	}
}
