package providers

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseOptions(t *testing.T) {
	o, err := ParseOptions("openai", map[string]any{
		"max_tokens": json.Number("100"), "temperature": 0.7, "top_p": json.Number("0.9"), "stop": []any{"END", "STOP"},
	}, CommonOptions)
	if err != nil {
		t.Fatal(err)
	}
	if *o.MaxTokens != 100 || *o.Temperature != 0.7 || *o.TopP != 0.9 || len(o.Stop) != 2 {
		t.Errorf("options %+v", o)
	}
	bad := []struct {
		opts map[string]any
		msg  string
	}{
		{map[string]any{"base_url": "https://x"}, "endpoints and API keys come from the deployment"},
		{map[string]any{"API_KEY_ENV": "X"}, "endpoints and API keys come from the deployment"},
		{map[string]any{"seed": 1}, "unknown model option \"seed\""},
		{map[string]any{"max_tokens": 1.5}, "positive integer"},
		{map[string]any{"max_tokens": "100"}, "positive integer"},
		{map[string]any{"temperature": 3}, "in range"},
		{map[string]any{"stop": []any{1}}, "array of strings"},
	}
	for _, b := range bad {
		_, err := ParseOptions("openai", b.opts, CommonOptions)
		if err == nil || !strings.Contains(err.Error(), b.msg) {
			t.Errorf("options %v: error %v, want %q", b.opts, err, b.msg)
		}
	}
	if _, err := ParseOptions("openai", nil, CommonOptions); err != nil {
		t.Errorf("no options: %v", err)
	}
}
