package agents

import (
	"strings"
	"testing"

	"github.com/baton-agents/baton/core"
)

func memoryAgent(t *testing.T, memory string, extra string) (*Agent, error) {
	t.Helper()
	r, err := Parse([]byte(`{"agents":[{"slug":"demo","model":{"provider":"scripted"}` + extra + `,"memory":` + memory + `}]}`))
	if err != nil {
		return nil, err
	}
	a, _ := r.Get("demo")
	return a, nil
}

func TestMemoryPolicyOfARun(t *testing.T) {
	a, err := memoryAgent(t, `{"tools":true,"extraction":{"enabled":true},"recall":{"top_k":3,"max_tokens":200}}`, `,"allow_overrides":["memory_subject"]`)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := a.RunConfig(Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Memory; p == nil || *p != (core.MemoryPolicy{TopK: 3, MaxTokens: 200, Extract: true}) {
		t.Fatalf("policy %+v", cfg.Memory)
	}
	var names []string
	for _, d := range cfg.Tools {
		names = append(names, d.Name)
		if d.Executor != core.ExecutorMemory || !d.RetrySafe() {
			t.Fatalf("memory tool %+v", d)
		}
	}
	if strings.Join(names, ",") != "memory/remember,memory/recall,memory/forget" {
		t.Fatalf("tools %v", names)
	}
	bob := "bob"
	cfg, err = a.RunConfig(Overrides{MemorySubject: &bob})
	if err != nil || cfg.Memory.Subject != "bob" || cfg.Memory.TopK != 3 {
		t.Fatalf("with memory_subject: %+v %v", cfg.Memory, err)
	}
}

func TestMemoryDefaultsAndAgentScope(t *testing.T) {
	a, err := memoryAgent(t, `{"scope":"agent","recall":{"top_k":-1}}`, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := a.RunConfig(Overrides{})
	if p := cfg.Memory; p.Subject != "agent:demo" || p.TopK != 0 || p.Extract || len(cfg.Tools) != 0 {
		t.Fatalf("policy %+v tools %d", p, len(cfg.Tools))
	}
	a, _ = memoryAgent(t, `{}`, "")
	cfg, _ = a.RunConfig(Overrides{})
	if p := cfg.Memory; *p != (core.MemoryPolicy{TopK: core.DefaultRecallTopK, MaxTokens: core.DefaultRecallMaxTokens}) {
		t.Fatalf("defaults %+v", p)
	}
	s := "x"
	if _, err := a.RunConfig(Overrides{MemorySubject: &s}); err == nil || !strings.Contains(err.Error(), "memory_subject") {
		t.Fatalf("memory_subject not allowed: %v", err)
	}
}

func TestMemoryBlockRefusals(t *testing.T) {
	for _, c := range []struct{ memory, extra, want string }{
		{`{"scope":"team"}`, "", "memory.scope"},
		{`{"recall":{"top_k":51}}`, "", "top_k"},
		{`{"recall":{"max_tokens":9000}}`, "", "max_tokens"},
		{`{"extraction":{"enabled":true,"max_facts":26}}`, "", "max_facts"},
		{`{"extraction":{"enabled":true,"model":{"model":"x"}}}`, "", "extraction.model.provider"},
		{`{"embedder":{"provider":"cohere"}}`, "", "embedder.provider"},
		{`{"embedder":{"provider":"bedrock","dimensions":300}}`, "", "256, 512 or 1024"},
		{`{"scope":"agent"}`, `,"allow_overrides":["memory_subject"]`, "scope agent"},
		{`{"tools":true}`, `,"tools":[{"name":"memory/remember","source":"x","description":"x","parameters":{"type":"object"},"executor":{"type":"http","url":"https://x.example"}}]`, "memory/ names"},
		{`{"tools":true,"nope":1}`, "", "unknown field"},
	} {
		if _, err := memoryAgent(t, c.memory, c.extra); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want %q", c.memory, c.extra, err, c.want)
		}
	}
	if _, err := Parse([]byte(`{"agents":[{"slug":"demo","model":{"provider":"scripted"},"allow_overrides":["memory_subject"]}]}`)); err == nil || !strings.Contains(err.Error(), "memory block") {
		t.Fatalf("memory_subject without memory: %v", err)
	}
}

func TestMemoryBlockValidatesAgainstTheSchema(t *testing.T) {
	file := `{"agents":[{"slug":"demo","model":{"provider":"scripted"},"allow_overrides":["memory_subject"],
  "memory":{"scope":"user","tools":true,"extraction":{"enabled":true,"prompt":"p","summary":true,"max_facts":5,"model":{"provider":"scripted"}},
    "recall":{"top_k":5,"max_tokens":500},"embedder":{"provider":"bedrock","model":"amazon.titan-embed-text-v2:0","dimensions":256}}}]}`
	if _, problems := Validate([]byte(file)); len(problems) > 0 {
		t.Fatalf("problems: %+v", problems)
	}
	_, problems := Validate([]byte(`{"agents":[{"slug":"demo","model":{"provider":"scripted"},"memory":{"recall":{"top_k":"five"}}}]}`))
	if len(problems) == 0 {
		t.Fatal("a string top_k passed")
	}
}

func TestExtractionModelMustBeEnabled(t *testing.T) {
	r, err := Parse([]byte(`{"agents":[{"slug":"demo","model":{"provider":"scripted"},"memory":{"extraction":{"enabled":true,"model":{"provider":"openai"}}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.CheckCompactionModels([]string{"scripted"}); err == nil || !strings.Contains(err.Error(), "memory.extraction.model.provider") {
		t.Fatalf("disabled provider: %v", err)
	}
	if err := r.CheckCompactionModels([]string{"scripted", "openai"}); err == nil || !strings.Contains(err.Error(), "memory.extraction.model.model is required") {
		t.Fatalf("no model id: %v", err)
	}
}
