package core

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCompileSchemaOnce: a schema is compiled once per distinct schema
// (its canonical JSON): the same schema, written with its keys in
// another order, is the same compiled schema; a different one is not.
func TestCompileSchemaOnce(t *testing.T) {
	decode := func(sj string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(sj), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	// minLength: not a simple schema, so only the general validator
	// checks it.
	a, err := compileSchema(decode(`{"type":"object","properties":{"q":{"type":"string","minLength":2}},"required":["q"]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := compileSchema(decode(`{"required":["q"],"properties":{"q":{"minLength":2,"type":"string"}},"type":"object"}`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := compileSchema(decode(`{"type":"object","properties":{"q":{"type":"string","minLength":3}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if a != b || a == c {
		t.Fatalf("compiled %p, %p for the same schema, %p for another", a, b, c)
	}
}

// TestValidateParametersProblems: the required list first (sorted, a
// null value is missing), then the whole schema, one line per leaf
// cause, sorted; typed Go values are checked as their JSON.
func TestValidateParametersProblems(t *testing.T) {
	var schema map[string]any
	if err := json.Unmarshal([]byte(`{"type":"object","required":["b","a"],"properties":{"a":{"type":"string","minLength":2},"b":{"type":"integer","minimum":1}}}`), &schema); err != nil {
		t.Fatal(err)
	}
	p, err := ValidateParameters(schema, map[string]any{"a": "xy", "b": nil})
	if err != nil || p == nil || strings.Join(p.Missing, ",") != "b" || p.Detail != "" {
		t.Fatalf("a null required parameter: %+v %v", p, err)
	}
	p, err = ValidateParameters(schema, map[string]any{})
	if err != nil || p == nil || strings.Join(p.Missing, ",") != "a,b" {
		t.Fatalf("no parameters: %+v %v", p, err)
	}
	p, err = ValidateParameters(schema, map[string]any{"a": "x", "b": json.Number("0")})
	if err != nil || p == nil || len(p.Missing) != 0 || !strings.HasPrefix(p.Detail, "at /a: ") || !strings.Contains(p.Detail, "; at /b: ") {
		t.Fatalf("two violations: %+v %v", p, err)
	}
	// Typed values (not as decodeJSON makes them) are validated as their
	// JSON: an int of 0 is below the minimum, one of 5 is not.
	if p, err := ValidateParameters(schema, map[string]any{"a": "xy", "b": 0}); err != nil || p == nil || !strings.HasPrefix(p.Detail, "at /b: ") {
		t.Fatalf("a typed 0: %+v %v", p, err)
	}
	if p, err := ValidateParameters(schema, map[string]any{"a": "xy", "b": 5}); err != nil || p != nil {
		t.Fatalf("a typed 5: %+v %v", p, err)
	}
	if p, err := ValidateParameters(map[string]any{}, map[string]any{"x": 1}); err != nil || p != nil {
		t.Fatalf("an empty schema: %+v %v", p, err)
	}
	if _, err := ValidateParameters(map[string]any{"type": "nope"}, map[string]any{}); err == nil {
		t.Fatal("a schema that does not compile: no error")
	}
	if d, err := ValidateValue(schema, map[string]any{"a": "xy", "b": json.Number("2")}); err != nil || d != "" {
		t.Fatalf("ValidateValue of a valid value: %q %v", d, err)
	}
	if d, err := ValidateValue(schema, []any{}); err != nil || !strings.HasPrefix(d, "at /: ") {
		t.Fatalf("ValidateValue of an array: %q %v", d, err)
	}
	if _, err := ValidateValue(map[string]any{"type": "nope"}, nil); err == nil {
		t.Fatal("ValidateValue with a schema that does not compile: no error")
	}
}
