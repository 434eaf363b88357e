package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// shippedAgentsFiles are the agents files in the repository.
var shippedAgentsFiles = []string{"../../cmd/baton/agents.demo.json", "../../tests/testdata/agents.json"}

// TestValidateShippedFiles: every agents file the repository ships is
// valid, by its schema and by the loader's checks.
func TestValidateShippedFiles(t *testing.T) {
	for _, f := range shippedAgentsFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if slugs, problems := Validate(b); len(problems) > 0 || len(slugs) == 0 {
			t.Errorf("%s: %v %v", f, slugs, problems)
		}
	}
}

// TestValidateListsEveryProblem: a file with problems of every kind
// (unknown field, wrong type, enumeration, missing field, secret
// sources, pattern, duration, duplicate slug, a loader-only rule) gets
// each of them, with its path, in file order.
func TestValidateListsEveryProblem(t *testing.T) {
	b, err := os.ReadFile("testdata/broken-agents.json")
	if err != nil {
		t.Fatal(err)
	}
	slugs, problems := Validate(b)
	got := make([]string, len(problems))
	for i, p := range problems {
		got[i] = p.String()
	}
	want := []string{
		"agents[0]: additional properties 'colour' not allowed",
		"agents[0].allow_overrides[0]: value must be one of 'model', 'max_turns', 'budgets', 'parallel_tool_calls', 'context_budget', 'callback', 'agent_version'",
		"agents[0].max_turns: got string, want integer",
		"agents[0].tools[0].executor.type: value must be one of 'http', 'lambda', 'go', 'agent', 'a2a'",
		"agents[0].tools[1]: missing property 'description'",
		"agents[0].tools[1].executor: set exactly one of secret_env, secret_ssm, secret_arn",
		"agents[1].budgets: additional properties 'dollars' not allowed",
		`agents[1].pending_ttl: "soon" is not a duration: want a Go duration such as "30s", "5m" or "24h"`,
		`agents[2].slug: duplicate slug "billing" (agents[1] has it too)`,
		"agents[2]: (billing) stream_tokens: true cannot go with output guardrails, which check a reply before anyone sees it: remove stream_tokens (such an agent never streams tokens) or the output rules",
	}
	if slugs != nil || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, tc := range []struct{ name, in, want string }{
		{"not JSON", "{\n  \"agents\": [,]\n}", "not JSON: line 2, column 14: invalid character ',' looking for beginning of value"},
		{"trailing data", `{"agents":[{"slug":"a","model":{"provider":"x"}}]} {}`, "unexpected data after the top-level JSON object"},
		{"loader-only rule", `{"agents":[{"slug":"a","model":{"provider":"x"},"compaction":{"enabled":true,"max_messages":4,"recent_messages":9}}]}`, "agents[0]: (a) invalid input: compaction.recent_messages (9) must be below compaction.max_messages (4)"},
	} {
		_, problems := Validate([]byte(tc.in))
		if len(problems) != 1 || problems[0].String() != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, problems, tc.want)
		}
	}
}

// TestSchemaAlone: the JSON Schema by itself, compiled by the validator
// editors and CI use (santhosh-tekuri/jsonschema), accepts every shipped
// file and refuses the broken one.
func TestSchemaAlone(t *testing.T) {
	c := jsonschema.NewCompiler()
	s, err := c.Compile(filepath.Join("..", "..", "events", "schemas", "agents-file.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	check := func(path string) error {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			t.Fatal(err)
		}
		return s.Validate(doc)
	}
	for _, f := range shippedAgentsFiles {
		if err := check(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if err := check("testdata/broken-agents.json"); err == nil {
		t.Error("the schema accepts the broken file")
	}
}

// TestSchemaKey: a file naming its schema with "$schema" (for editors)
// loads and validates.
func TestSchemaKey(t *testing.T) {
	b := []byte(`{"$schema": "../events/schemas/agents-file.schema.json", "agents": [{"slug": "a", "model": {"provider": "scripted"}}]}`)
	if _, err := Parse(b); err != nil {
		t.Fatal(err)
	}
	if _, problems := Validate(b); len(problems) > 0 {
		t.Fatal(problems)
	}
}
