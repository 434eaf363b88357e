package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/baton-agents/baton/events"
)

// SchemaFile is the agents file's JSON Schema in events.Schemas.
const SchemaFile = "schemas/agents-file.schema.json"

// Problem is one thing wrong with an agents file: where (a path such as
// agents[0].tools[2].executor.url; "" for the whole file) and what.
type Problem struct {
	Path    string
	Message string
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// Validate checks an agents file and returns every problem it finds,
// each with its path, in file order: the file's JSON, its JSON Schema
// (SchemaFile: unknown fields, types, required fields, enumerations),
// then, for each agent the schema accepts, the checks Parse makes
// (durations, tool declarations, secret sources, hooks, overrides…),
// and the checks across agents (duplicate slugs). Checks that need the
// network or AWS (reading secrets, reaching MCP servers) are not made.
// It returns the agents' slugs when there is no problem.
func Validate(b []byte) ([]string, []Problem) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, []Problem{{Message: "not JSON: " + jsonErrorAt(b, err)}}
	}
	if dec.More() {
		return nil, []Problem{{Message: "unexpected data after the top-level JSON object"}}
	}
	s, err := agentsSchema()
	if err != nil {
		return nil, []Problem{{Message: "the agents file schema: " + err.Error()}}
	}
	var problems []Problem
	bad := map[int]bool{} // agents the schema refused
	if err := s.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return nil, []Problem{{Message: err.Error()}}
		}
		for _, p := range schemaProblems(ve) {
			problems = append(problems, p)
			if i, ok := agentIndex(p.Path); ok {
				bad[i] = true
			}
		}
	}
	var f struct {
		Agents []json.RawMessage `json:"agents"`
	}
	_ = json.Unmarshal(b, &f)
	seen := map[string]int{}
	var slugs []string
	for i, raw := range f.Agents {
		var s Spec
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		if err := d.Decode(&s); err != nil {
			if !bad[i] {
				problems = append(problems, Problem{Path: fmt.Sprintf("agents[%d]", i), Message: err.Error()})
			}
			continue
		}
		if j, dup := seen[s.Slug]; dup && s.Slug != "" {
			problems = append(problems, Problem{Path: fmt.Sprintf("agents[%d].slug", i), Message: fmt.Sprintf("duplicate slug %q (agents[%d] has it too)", s.Slug, j)})
		}
		seen[s.Slug] = i
		slugs = append(slugs, s.Slug)
		if bad[i] {
			continue
		}
		if _, err := build(s); err != nil {
			problems = append(problems, Problem{Path: fmt.Sprintf("agents[%d]", i), Message: agentError(s.Slug, err)})
		}
	}
	if len(problems) == 0 {
		if _, err := Parse(b); err != nil {
			problems = append(problems, Problem{Message: err.Error()})
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return slugs, nil
}

// agentError is a build error of the agent with slug, its slug said once.
func agentError(slug string, err error) string {
	msg := err.Error()
	if slug != "" {
		msg = strings.TrimPrefix(msg, "agent "+slug+": ")
		return fmt.Sprintf("(%s) %s", slug, msg)
	}
	return msg
}

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

// agentsSchema is the compiled SchemaFile.
func agentsSchema() (*jsonschema.Schema, error) {
	schemaOnce.Do(func() {
		f, err := events.Schemas.Open(SchemaFile)
		if err != nil {
			schemaErr = err
			return
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			schemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("agents-file.schema.json", doc); err != nil {
			schemaErr = err
			return
		}
		schema, schemaErr = c.Compile("agents-file.schema.json")
	})
	return schema, schemaErr
}

var printer = message.NewPrinter(language.English)

// schemaProblems turns a validation error into one problem per leaf
// cause, in the order of their paths.
func schemaProblems(ve *jsonschema.ValidationError) []Problem {
	var out []Problem
	seen := map[string]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if msg, ok := plainMessage(e); ok || len(e.Causes) == 0 {
			if !ok {
				msg = e.ErrorKind.LocalizedString(printer)
			}
			p := Problem{Path: jsonPath(e.InstanceLocation), Message: msg}
			if !seen[p.String()] {
				seen[p.String()] = true
				out = append(out, p)
			}
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool { return pathLess(out[i].Path, out[j].Path) })
	return out
}

// plainMessage says some schema errors more plainly than the validator:
// a oneOf whose alternatives each miss one property (exactly one of
// secret_env, secret_ssm and secret_arn), and a duration that does not
// parse.
func plainMessage(e *jsonschema.ValidationError) (string, bool) {
	switch k := e.ErrorKind.(type) {
	case *kind.OneOf:
		var names []string
		for _, c := range e.Causes {
			r, ok := c.ErrorKind.(*kind.Required)
			if !ok || len(r.Missing) != 1 {
				return "", false
			}
			names = append(names, r.Missing[0])
		}
		if len(names) == 0 {
			return "", false
		}
		if k.Subschemas == nil {
			return "set exactly one of " + strings.Join(names, ", "), true
		}
		return "set only one of " + strings.Join(names, ", "), true
	case *kind.Pattern:
		if strings.HasSuffix(e.SchemaURL, "/$defs/duration") {
			return fmt.Sprintf("%q is not a duration: want a Go duration such as \"30s\", \"5m\" or \"24h\"", k.Got), true
		}
	}
	return "", false
}

// jsonPath writes an instance location as agents[0].tools[2].name.
func jsonPath(loc []string) string {
	var sb strings.Builder
	for _, s := range loc {
		if _, err := strconv.Atoi(s); err == nil {
			sb.WriteString("[" + s + "]")
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(s)
	}
	return sb.String()
}

// pathLess orders paths as they appear in a file: array indexes
// numerically.
func pathLess(a, b string) bool {
	ka, kb := pathKey(a), pathKey(b)
	for i := 0; i < len(ka) && i < len(kb); i++ {
		if ka[i] != kb[i] {
			na, ea := strconv.Atoi(ka[i])
			nb, eb := strconv.Atoi(kb[i])
			if ea == nil && eb == nil {
				return na < nb
			}
			return ka[i] < kb[i]
		}
	}
	return len(ka) < len(kb)
}

func pathKey(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == '.' || r == '[' || r == ']' })
}

// agentIndex is i of a path under agents[i].
func agentIndex(path string) (int, bool) {
	rest, ok := strings.CutPrefix(path, "agents[")
	if !ok {
		return 0, false
	}
	n, _, ok := strings.Cut(rest, "]")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(n)
	return i, err == nil
}

// jsonErrorAt adds the line and column of a JSON syntax error.
func jsonErrorAt(b []byte, err error) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err.Error()
	}
	line, col := 1, 1
	for _, c := range b[:max(0, min(int(se.Offset)-1, len(b)))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Sprintf("line %d, column %d: %v", line, col, err)
}
