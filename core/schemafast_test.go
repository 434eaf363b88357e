package core

import (
	"encoding/json"
	"testing"
)

// TestSimpleSchemaNeverAcceptsInvalid checks the simple-schema shortcut
// against the general validator: whatever it accepts, the validator
// accepts, it accepts the plain valid cases, and schemas outside its
// subset are left to the validator.
func TestSimpleSchemaNeverAcceptsInvalid(t *testing.T) {
	schemas := []string{
		`{"type":"object","required":["i","bytes"],"properties":{"i":{"type":"integer"},"bytes":{"type":"integer","description":"n"}}}`,
		`{"type":"object","additionalProperties":false,"properties":{"s":{"type":"string"},"n":{"type":"number"},"b":{"type":"boolean"},"o":{"type":"object"},"a":{"type":"array"},"z":{"type":"null"},"any":{}}}`,
	}
	args := []string{
		`{}`, `{"i":1,"bytes":100}`, `{"i":-3,"bytes":0}`, `{"i":1.5,"bytes":1}`, `{"i":"1","bytes":1}`, `{"i":1e2,"bytes":1}`, `{"i":1.0,"bytes":2}`, `{"i":90,"bytes":-9}`,
		`{"s":"x","n":1.5,"b":true,"o":{},"a":[],"z":null,"any":[1]}`, `{"s":1}`, `{"n":"1"}`, `{"b":null}`, `{"o":[]}`, `{"a":{}}`, `{"z":0}`, `{"extra":1}`,
	}
	accepted := 0
	for _, sj := range schemas {
		var schema map[string]any
		if err := decodeJSON([]byte(sj), &schema); err != nil {
			t.Fatal(err)
		}
		simple := simpleSchemaOf(schema)
		if simple == nil {
			t.Fatalf("%s: not recognized as simple", sj)
		}
		for _, aj := range args {
			var a map[string]any
			if err := decodeJSON([]byte(aj), &a); err != nil {
				t.Fatal(err)
			}
			prob, err := validateParameters(schema, a)
			if err != nil {
				t.Fatal(err)
			}
			// validateCompiled checks the required list before the
			// shortcut.
			if (prob == nil || len(prob.Missing) == 0) && simple.accepts(a) {
				accepted++
				if prob != nil {
					t.Errorf("%s with %s: accepted, but the validator says %+v", sj, aj, prob)
				}
				// validateParameters takes the shortcut too: ask the general
				// validator alone.
				if d, err := ValidateValue(schema, a); err != nil || d != "" {
					t.Errorf("%s with %s: accepted, but the general validator says %q %v", sj, aj, d, err)
				}
			}
			// The shortcut changes no outcome.
			got, _ := validateCompiled(schema, &compiledSchema{}, a)
			// (The validator's text may list additional properties in
			// either order, so only the outcome is compared.)
			if (got == nil) != (prob == nil) || (got != nil && len(got.Missing) != len(prob.Missing)) {
				t.Errorf("%s with %s: %+v with the shortcut, %+v without", sj, aj, got, prob)
			}
		}
	}
	// Exactly the plain valid cases: {"i":1,"bytes":100}, {"i":-3,"bytes":0}
	// and {"i":90,"bytes":-9}; {} and the one of every type.
	if accepted != 5 {
		t.Errorf("the shortcut accepted %d valid cases, want 5", accepted)
	}
	for _, sj := range []string{`{"type":"object","properties":{"i":{"type":"integer","minimum":0}}}`, `{"type":"object","properties":{"x":{"type":["string","null"]}}}`,
		`{"type":"object","additionalProperties":{"type":"string"}}`, `{"type":"object","$defs":{}}`, `{"type":"array"}`, `{"type":"object","properties":{"x":true}}`} {
		var schema map[string]any
		if err := json.Unmarshal([]byte(sj), &schema); err != nil {
			t.Fatal(err)
		}
		if simpleSchemaOf(schema) != nil {
			t.Errorf("%s: taken as simple", sj)
		}
	}
}

// TestSimpleSchemaIsValid checks what lets checkSchema skip compiling a
// simple schema: every schema simpleSchemaOf takes compiles, and the
// schemas whose keywords have values of the wrong type, which do not
// compile, are not taken as simple.
func TestSimpleSchemaIsValid(t *testing.T) {
	decode := func(sj string) map[string]any {
		var schema map[string]any
		if err := decodeJSON([]byte(sj), &schema); err != nil {
			t.Fatal(err)
		}
		return schema
	}
	for _, sj := range []string{
		`{}`, `{"type":"object"}`, `{"properties":{}}`, `{"required":[]}`, `{"title":"t","description":"d","additionalProperties":true}`,
		`{"type":"object","required":["a","b"],"properties":{"a":{"type":"string","title":"A","description":"a"},"b":{},"c":{"type":"null"}}}`,
	} {
		schema := decode(sj)
		if simpleSchemaOf(schema) == nil {
			t.Errorf("%s: not taken as simple", sj)
		}
		if _, err := compileSchema(schema); err != nil {
			t.Errorf("%s: simple, but it does not compile: %v", sj, err)
		}
		if err := CheckSchema(schema); err != nil {
			t.Errorf("%s: CheckSchema: %v", sj, err)
		}
	}
	for _, sj := range []string{
		`{"type":"object","required":["a","a"]}`, `{"type":"object","required":[1]}`, `{"type":"object","required":"a"}`,
		`{"type":"object","description":1}`, `{"type":"object","title":false}`, `{"type":"object","properties":{"a":{"description":["x"]}}}`,
		`{"type":"object","properties":{"a":{"title":2}}}`, `{"type":"object","properties":{"a":{"type":"text"}}}`, `{"type":"object","additionalProperties":"no"}`,
	} {
		schema := decode(sj)
		if simpleSchemaOf(schema) != nil {
			t.Errorf("%s: taken as simple", sj)
		}
		if _, err := compileSchema(schema); err == nil {
			t.Errorf("%s: compiles (the case meant an invalid schema)", sj)
		}
		if err := CheckSchema(schema); err == nil {
			t.Errorf("%s: CheckSchema accepts it", sj)
		}
	}
}
