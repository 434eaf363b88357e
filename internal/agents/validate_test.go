package agents

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
// each of them, with its path, line and column, in file order — the
// loader's rule checked although the schema refused parts of the file.
func TestValidateListsEveryProblem(t *testing.T) {
	b, err := os.ReadFile("testdata/broken-agents.json")
	if err != nil {
		t.Fatal(err)
	}
	slugs, problems := Validate(b)
	got := positioned(problems)
	want := []string{
		`6:7 agents[0].colour: unknown field "colour"`,
		"7:20 agents[0].max_turns: got string, want integer",
		"8:27 agents[0].allow_overrides[0]: value must be one of 'model', 'max_turns', 'budgets', 'parallel_tool_calls', 'context_budget', 'callback', 'agent_version', 'memory_subject'",
		"11:31 agents[0].tools[0].executor.type: value must be one of 'http', 'lambda', 'go', 'agent', 'a2a'",
		"12:9 agents[0].tools[1]: missing property 'description'",
		"13:22 agents[0].tools[1].executor: set exactly one of secret_env, secret_ssm, secret_arn",
		`19:22 agents[1].pending_ttl: "soon" is not a duration: want a Go duration such as "30s", "5m" or "24h"`,
		`20:19 agents[1].budgets.dollars: unknown field "dollars"`,
		`23:15 agents[2].slug: duplicate slug "billing" (agents[1] has it too)`,
		"25:24 agents[2].stream_tokens: true cannot go with output guardrails, which check a reply before anyone sees it: remove stream_tokens (such an agent never streams tokens) or the output rules",
	}
	if slugs != nil {
		t.Fatalf("slugs %v for a broken file", slugs)
	}
	sameLines(t, got, want)
	for _, tc := range []struct{ name, in, want string }{
		{"not JSON", "{\n  \"agents\": [,]\n}", "not JSON: line 2, column 14: invalid character ',' looking for beginning of value"},
		{"trailing data", `{"agents":[{"slug":"a","model":{"provider":"x"}}]} {}`, "unexpected data after the top-level JSON object"},
		{"loader-only rule", `{"agents":[{"slug":"a","model":{"provider":"x"},"compaction":{"enabled":true,"max_messages":4,"recent_messages":9}}]}`, "agents[0].compaction.recent_messages: compaction.recent_messages (9) must be below compaction.max_messages (4)"},
	} {
		_, problems := Validate([]byte(tc.in))
		if len(problems) != 1 || problems[0].String() != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, problems, tc.want)
		}
		if tc.name == "trailing data" && (problems[0].Line != 1 || problems[0].Column != 52) {
			t.Errorf("trailing data at %d:%d, want 1:52 (the second object)", problems[0].Line, problems[0].Column)
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

// positioned writes each problem as LINE:COLUMN PATH: MESSAGE.
func positioned(problems []Problem) []string {
	out := make([]string, len(problems))
	for i, p := range problems {
		out[i] = fmt.Sprintf("%d:%d %s", p.Line, p.Column, p)
	}
	return out
}

// sameLines fails t when got is not want.
func sameLines(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// sixProblems is a file with six problems of six kinds: two the schema
// finds and four it cannot (provider, Go handler, handoff target, a
// loader rule).
const sixProblems = "testdata/six-problems.json"

// TestValidateInEnvironment: with what the build provides, ValidateIn
// finds every problem of a file in one pass — the semantic ones of an
// agent whose other parts the schema refused included — each with its
// line and column and the nearest valid name; without it (Validate),
// providers and Go handlers are not checked.
func TestValidateInEnvironment(t *testing.T) {
	b, err := os.ReadFile(sixProblems)
	if err != nil {
		t.Fatal(err)
	}
	env := Environment{Providers: []string{"scripted", "openai", "anthropic", "bedrock"}, GoHandlers: []string{"echo"}}
	_, problems := ValidateIn(b, env)
	got := positioned(problems)
	want := []string{
		`5:29 agents[0].model.provider: unknown provider "scriptd" (this build has scripted, openai, anthropic, bedrock); did you mean "scripted"?`,
		`6:7 agents[0].max_turn: unknown field "max_turn"; did you mean "max_turns"?`,
		`7:20 agents[0].handoffs[0]: "biling" is not an agent of this file (it has support, billing); did you mean "billing"?`,
		`10:48 agents[0].tools[0].executor.handler: no Go handler named "ecko" is registered in this build (it has echo); did you mean "echo"?`,
		`12:31 agents[0].tools[1].executor.type: value must be one of 'http', 'lambda', 'go', 'agent', 'a2a'; did you mean "http"?`,
		`18:77 agents[1].compaction.recent_messages: compaction.recent_messages (9) must be below compaction.max_messages (4)`,
	}
	sameLines(t, got, want)
	_, problems = Validate(b)
	for _, p := range problems {
		if strings.Contains(p.Message, "provider") || strings.Contains(p.Message, "Go handler") {
			t.Errorf("Validate checked the build: %s", p)
		}
	}
	if len(problems) != 4 {
		t.Errorf("Validate: %d problems, want 4: %v", len(problems), problems)
	}
}

// TestSemanticProblemsAllAtOnce: one agent with several problems only
// the loader finds (two tools, a handoff, callback hosts) gets all of
// them, not the first one per round; a client/ tool gets a plain
// message.
func TestSemanticProblemsAllAtOnce(t *testing.T) {
	b := []byte(`{"agents":[{"slug":"a","model":{"provider":"scripted"},
 "tools":[{"name":"a/x","source":"a","description":"d","executor":{"type":"go","handler":"echo"},"output_schema":{}},
          {"name":"a/ok","source":"a","description":"d","executor":{"type":"go","handler":"echo"}},
          {"name":"handoff/b","source":"s","description":"d","executor":{"type":"go","handler":"echo"}}],
 "handoffs":["a"],
 "callback_hosts":["hooks.example.com"]}]}`)
	_, problems := Validate(b)
	got := positioned(problems)
	want := []string{
		"2:11 agents[0].tools[0]: a/x: output_schema is for agent tools (executor type agent)",
		"4:11 agents[0].tools[2]: handoff/b: handoff/ names are the tools of handoffs, made from the agents they name",
		"5:14 agents[0].handoffs[0]: an agent cannot hand off to itself",
		"6:19 agents[0].callback_hosts: set only when allow_overrides lists callback",
	}
	sameLines(t, got, want)
	_, problems = Validate([]byte(`{"agents":[{"slug":"a","model":{"provider":"scripted"},"tools":[{"name":"client/x","source":"a","description":"d","executor":{"type":"go","handler":"echo"}}]}]}`))
	if len(problems) != 1 || problems[0].String() != "agents[0].tools[0].name: client/ and mcp/ tools are not declared here: client tools come with each API request, mcp/ tools from the agent's mcp_servers" {
		t.Fatalf("client tool: %v", problems)
	}
}

// TestNearest: a misspelt name gets the valid one nearest to it, and a
// name far from every valid one gets none.
func TestNearest(t *testing.T) {
	names := []string{"scripted", "openai", "anthropic", "bedrock"}
	for got, want := range map[string]string{"scriptd": "scripted", "Scripted": "scripted", "anthropc": "anthropic", "opnai": "openai", "gpt": "", "x": "", "scripted": ""} {
		if n := nearest(got, names); n != want {
			t.Errorf("nearest(%q) = %q, want %q", got, n, want)
		}
	}
}

// TestPositions: each value's and each key's line and column, in
// characters (a multi-byte one counts once); a path the file does not
// hold gets its nearest ancestor's.
func TestPositions(t *testing.T) {
	p := indexPositions([]byte("{\n  \"a\": [1,\n    {\"é\": \"x\", \"b\": true}]}"))
	for _, tc := range []struct {
		path      string
		key       bool
		line, col int
	}{
		{"", false, 1, 1}, {"a", false, 2, 8}, {"a", true, 2, 3}, {"a[0]", false, 2, 9},
		{"a[1]", false, 3, 5}, {"a[1].é", false, 3, 11}, {"a[1].b", true, 3, 16}, {"a[1].b", false, 3, 21}, {"a[1].c.d", false, 3, 5},
	} {
		if l, c, ok := p.at(tc.path, tc.key); !ok || l != tc.line || c != tc.col {
			t.Errorf("%q (key %v): %d:%d, want %d:%d", tc.path, tc.key, l, c, tc.line, tc.col)
		}
	}
}

// TestSchemaStrictTypes: the schema passes ajv's strict mode, which
// editors and JavaScript CI use: every keyword that applies to one JSON
// type sits in a subschema that names that type, or under one at the
// same level of the data (allOf, if, then…; strictTypes), no subschema
// names a union of types, and every required property is declared in
// the same subschema's properties (strictRequired).
func TestSchemaStrictTypes(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "events", "schemas", "agents-file.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if bad := strictTypeProblems(doc, "#", ""); len(bad) > 0 {
		t.Fatalf("strict mode would refuse the schema:\n%s", strings.Join(bad, "\n"))
	}
	old := map[string]any{"type": "object", "if": map[string]any{"properties": map[string]any{"executor": map[string]any{"properties": map[string]any{"type": map[string]any{"const": "agent"}}}}}}
	if bad := strictTypeProblems(old, "#", ""); len(bad) != 1 || !strings.Contains(bad[0], "#/if/properties/executor") {
		t.Fatalf("the check misses an untyped properties keyword: %v", bad)
	}
}

// typedKeywords are the keywords that apply to one JSON type.
var typedKeywords = map[string]string{
	"properties": "object", "required": "object", "additionalProperties": "object", "patternProperties": "object", "propertyNames": "object",
	"minProperties": "object", "maxProperties": "object", "dependentRequired": "object",
	"items": "array", "prefixItems": "array", "minItems": "array", "maxItems": "array", "uniqueItems": "array", "contains": "array",
	"pattern": "string", "minLength": "string", "maxLength": "string", "format": "string",
	"minimum": "number", "maximum": "number", "exclusiveMinimum": "number", "exclusiveMaximum": "number", "multipleOf": "number",
}

// strictTypeProblems walks a schema as ajv's strictTypes does: known is
// the type the subschemas applied to the same data have named.
func strictTypeProblems(node any, at, known string) []string {
	m, ok := node.(map[string]any)
	if !ok {
		return nil
	}
	var out []string
	switch ty := m["type"].(type) {
	case string:
		known = ty
	case []any:
		out = append(out, at+": a union of types ("+fmt.Sprint(ty)+")")
	}
	props, _ := m["properties"].(map[string]any)
	required, _ := m["required"].([]any)
	for _, name := range required {
		if _, ok := props[fmt.Sprint(name)]; !ok {
			out = append(out, fmt.Sprintf("%s: required %q is not in its properties", at, name))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if want, ok := typedKeywords[k]; ok && want != known && !(want == "number" && known == "integer") {
			out = append(out, fmt.Sprintf("%s: %s without \"type\": %q", at, k, want))
		}
		switch v := m[k].(type) {
		case map[string]any:
			switch k {
			case "properties", "patternProperties", "$defs", "dependentSchemas":
				for _, name := range slices.Sorted(maps.Keys(v)) {
					out = append(out, strictTypeProblems(v[name], at+"/"+k+"/"+name, "")...)
				}
			case "if", "then", "else", "not":
				out = append(out, strictTypeProblems(v, at+"/"+k, known)...)
			case "items", "additionalProperties", "contains", "propertyNames":
				out = append(out, strictTypeProblems(v, at+"/"+k, "")...)
			}
		case []any:
			switch k {
			case "allOf", "anyOf", "oneOf":
				for i, s := range v {
					out = append(out, strictTypeProblems(s, fmt.Sprintf("%s/%s/%d", at, k, i), known)...)
				}
			case "prefixItems":
				for i, s := range v {
					out = append(out, strictTypeProblems(s, fmt.Sprintf("%s/%s/%d", at, k, i), "")...)
				}
			}
		}
	}
	return out
}
