package core

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// schemaCache holds compiled parameter schemas by their canonical JSON.
// Declarations are few and long-lived, so the cache is bounded by a simple
// size cap rather than evicted.
var schemaCache struct {
	mu      sync.RWMutex
	entries map[string]*schemaEntry
}

const schemaCacheMax = 4096

// compiledSchema is a declaration's parameter schema, compiled at most
// once.
type compiledSchema struct {
	once   sync.Once
	schema *jsonschema.Schema
	err    error
	// simple, when the schema is simple enough, accepts valid
	// arguments without the general validator.
	simple *simpleSchema
}

// get compiles schema the first time.
func (c *compiledSchema) get(schema map[string]any) (*jsonschema.Schema, *simpleSchema, error) {
	c.once.Do(func() {
		c.schema, c.simple, c.err = compileSchemaEntry(schema)
	})
	return c.schema, c.simple, c.err
}

// compileSchema compiles a tool's parameter schema, once per distinct
// schema. Schemas are compiled in memory and never load remote references.
func compileSchema(schema map[string]any) (*jsonschema.Schema, error) {
	s, _, err := compileSchemaEntry(schema)
	return s, err
}

// schemaEntry is a compiled schema and, when it is simple enough, its
// simpleSchema.
type schemaEntry struct {
	schema *jsonschema.Schema
	simple *simpleSchema
}

// compileSchemaEntry is compileSchema with the schema's simpleSchema.
func compileSchemaEntry(schema map[string]any) (*jsonschema.Schema, *simpleSchema, error) {
	var key string // the schema's canonical JSON, copied only when new
	var e *schemaEntry
	err := withCanonical(schema, false, func(b []byte, _ bool) {
		schemaCache.mu.RLock()
		e = schemaCache.entries[string(b)]
		schemaCache.mu.RUnlock()
		if e == nil {
			key = string(b)
		}
	})
	if err != nil {
		return nil, nil, err
	}
	if e != nil {
		return e.schema, e.simple, nil
	}
	s, err := compileSchemaUncached(schema)
	if err != nil {
		return nil, nil, err
	}
	e = &schemaEntry{schema: s, simple: simpleSchemaOf(schema)}
	schemaCache.mu.Lock()
	if schemaCache.entries == nil {
		schemaCache.entries = map[string]*schemaEntry{}
	}
	if len(schemaCache.entries) < schemaCacheMax {
		schemaCache.entries[key] = e
	}
	schemaCache.mu.Unlock()
	return e.schema, e.simple, nil
}

func compileSchemaUncached(schema map[string]any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource("baton:tool-parameters.json", cloneJSON(schema)); err != nil {
		return nil, err
	}
	return c.Compile("baton:tool-parameters.json")
}

var schemaPrinter = message.NewPrinter(language.English)

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("remote schema references are not allowed: %s", url)
}

// ParameterProblem is the outcome of validating tool-call arguments.
type ParameterProblem struct {
	Missing []string // top-level required parameters that are absent
	Detail  string   // other schema violations
}

// validateParameters checks args against the declaration's schema: first
// the top-level required list (reported as missing parameters), then the
// whole schema.
func validateParameters(schema map[string]any, args map[string]any) (*ParameterProblem, error) {
	return validateCompiled(schema, nil, args)
}

// validateCompiled is validateParameters with the declaration's compiled
// schema, when it has one.
func validateCompiled(schema map[string]any, compiled *compiledSchema, args map[string]any) (*ParameterProblem, error) {
	var missing []string
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			name, ok := r.(string)
			if !ok {
				continue
			}
			if v, present := args[name]; !present || v == nil {
				missing = append(missing, name)
			}
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return &ParameterProblem{Missing: missing}, nil
	}
	if len(schema) == 0 {
		return nil, nil
	}
	var s *jsonschema.Schema
	var err error
	if compiled != nil {
		var simple *simpleSchema
		s, simple, err = compiled.get(schema)
		if err == nil && simple != nil && simple.accepts(args) {
			return nil, nil
		}
	} else {
		var simple *simpleSchema
		s, simple, err = compileSchemaEntry(schema)
		if err == nil && simple != nil && simple.accepts(args) {
			return nil, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("compile parameter schema: %w", err)
	}
	// Validation reads the instance only: generic parameters need no copy.
	var inst any = args
	if !isGeneric(args) {
		if inst, err = ToJSONValue(args); err != nil {
			return nil, err
		}
	}
	if err := s.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return &ParameterProblem{Detail: describeValidation(ve)}, nil
		}
		return &ParameterProblem{Detail: err.Error()}, nil
	}
	return nil, nil
}

// describeValidation flattens a validation error into one deterministic
// line per leaf cause.
func describeValidation(ve *jsonschema.ValidationError) string {
	var lines []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			lines = append(lines, fmt.Sprintf("at %s: %s", loc, e.ErrorKind.LocalizedString(schemaPrinter)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(lines)
	return strings.Join(lines, "; ")
}

// ValidateParameters checks args against schema as mediation checks a
// call's parameters against its declaration: the top-level required
// list first (Missing), then the whole schema (Detail). It returns nil
// when args validate, and an error when the schema does not compile.
func ValidateParameters(schema, args map[string]any) (*ParameterProblem, error) {
	return validateParameters(schema, args)
}

// CheckSchema reports whether schema compiles as a parameter schema
// (in memory; remote references are refused).
func CheckSchema(schema map[string]any) error { return checkSchema(schema) }

// checkSchema is CheckSchema. A simple schema (simpleSchemaOf) is valid
// and is not compiled here: loading an agents file, at cold start,
// compiles no schema (nor the validator's metaschemas) when its
// declarations are simple; each is compiled when a call first needs the
// general validator.
func checkSchema(schema map[string]any) error {
	if simpleSchemaOf(schema) != nil {
		return nil
	}
	_, err := compileSchema(schema)
	return err
}

// ValidateValue checks any JSON value v (as ToJSONValue makes it)
// against schema: nil when it validates, a description of what does not.
// An error is a schema that does not compile.
func ValidateValue(schema map[string]any, v any) (string, error) {
	s, _, err := compileSchemaEntry(schema)
	if err != nil {
		return "", fmt.Errorf("compile schema: %w", err)
	}
	if err := s.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return describeValidation(ve), nil
		}
		return err.Error(), nil
	}
	return "", nil
}
