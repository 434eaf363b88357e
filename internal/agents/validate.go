package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/events"
	"github.com/baton-agents/baton/internal/toolspec"
)

// SchemaFile is the agents file's JSON Schema in events.Schemas.
const SchemaFile = "schemas/agents-file.schema.json"

// Problem is one thing wrong with an agents file: where (a path such as
// agents[0].tools[2].executor.url; "" for the whole file, and the
// 1-based line and column of the value at the path, or of the key of an
// unknown field; 0 when not known) and what.
type Problem struct {
	Path    string
	Message string
	Line    int
	Column  int
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// At writes p for a file named name as compilers do:
// name:line:column: path: message (name: path: message without a
// position).
func At(name string, p Problem) string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", name, p.Line, p.Column, p)
	}
	return name + ": " + p.String()
}

// FileError is an agents file the loader refuses, with every problem
// ValidateIn finds in it.
type FileError struct {
	Name     string
	Problems []Problem
	// File: Name is a file's path (not an environment variable or an
	// embedded file), which baton agents validate can check.
	File bool
}

func (e *FileError) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "agents file %s: %d problem", e.Name, len(e.Problems))
	if len(e.Problems) != 1 {
		sb.WriteByte('s')
	}
	if e.File {
		fmt.Fprintf(&sb, " (baton agents validate %s lists them too)", e.Name)
	} else {
		sb.WriteString(" (baton agents validate FILE lists them too)")
	}
	for _, p := range e.Problems {
		sb.WriteString("\n  " + At(e.Name, p))
	}
	return sb.String()
}

// Lacks reports whether an agent of r needs what env does not provide:
// a provider or a Go handler (ValidateIn says which).
func (r *Registry) Lacks(env Environment) bool {
	for _, a := range r.agents {
		s := a.Spec
		if env.Providers != nil && (!slices.Contains(env.Providers, s.Model.Provider) ||
			s.Compaction != nil && s.Compaction.Model != nil && !slices.Contains(env.Providers, s.Compaction.Model.Provider)) {
			return true
		}
		for _, ex := range a.Executors {
			if env.GoHandlers != nil && ex.Type == toolspec.TypeGo && !slices.Contains(env.GoHandlers, ex.Handler) {
				return true
			}
		}
	}
	return false
}

// Environment is what the build that loads a file provides, for the
// checks that depend on it; a nil list is not checked.
type Environment struct {
	// GoHandlers are the Go tool handlers registered in the build
	// (executor type go).
	GoHandlers []string
	// Providers are the model providers the build knows.
	Providers []string
}

// Validate is ValidateIn with nothing known of the build: Go handlers
// and providers are not checked.
func Validate(b []byte) ([]string, []Problem) { return ValidateIn(b, Environment{}) }

// ValidateIn checks an agents file and returns every problem it finds in
// one pass, each with its path, line and column, in file order: the
// file's JSON, its JSON Schema (SchemaFile: unknown fields, types,
// required fields, enumerations), the checks Parse makes (durations,
// tool declarations, secret sources, hooks, overrides…) of every agent,
// even one the schema refused (without the parts it refused), what env
// provides (model providers, Go handlers), and the checks across agents
// (duplicate slugs, handoff and agent-tool targets). A misspelt name
// (field, enumeration value, provider, handler, agent) gets the nearest
// valid one ("did you mean"). Checks that need the network or AWS
// (reading secrets, reaching MCP servers) are not made. It returns the
// agents' slugs when there is no problem.
func ValidateIn(b []byte, env Environment) ([]string, []Problem) {
	v := &validation{pos: indexPositions(b), env: env}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		p := Problem{Message: "not JSON: " + jsonErrorAt(b, err)}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			p.Line, p.Column = lineCol(b, int(se.Offset)-1)
		}
		return nil, []Problem{p}
	}
	if dec.More() {
		p := Problem{Message: "unexpected data after the top-level JSON object"}
		p.Line, p.Column = lineCol(b, v.pos.start(dec.InputOffset()))
		return nil, []Problem{p}
	}
	s, err := agentsSchema()
	if err != nil {
		return nil, []Problem{{Message: "the agents file schema: " + err.Error()}}
	}
	refused := map[int][]string{} // agent → the paths the schema refused in it
	if err := s.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return nil, []Problem{{Message: err.Error()}}
		}
		for _, p := range v.schemaProblems(ve) {
			v.problems = append(v.problems, p)
			if i, ok := agentIndex(p.Path); ok {
				refused[i] = append(refused[i], p.Path)
			}
		}
	}
	var f struct {
		Agents []json.RawMessage `json:"agents"`
	}
	_ = json.Unmarshal(b, &f)
	specs := make([]*agentSpec, len(f.Agents))
	for i, raw := range f.Agents {
		specs[i] = v.agent(i, raw, refused[i])
	}
	slugs := v.links(specs)
	if len(v.problems) == 0 {
		if _, err := Parse(b); err != nil {
			v.add("", false, err.Error())
		}
	}
	if len(v.problems) > 0 {
		sort.SliceStable(v.problems, func(i, j int) bool {
			a, b := v.problems[i], v.problems[j]
			if a.Line != b.Line {
				return a.Line < b.Line
			}
			return a.Column < b.Column
		})
		return nil, v.problems
	}
	return slugs, nil
}

// validation is one ValidateIn.
type validation struct {
	pos      *positions
	env      Environment
	problems []Problem
}

// add records a problem at path (at its key when key is set).
func (v *validation) add(path string, key bool, msg string) {
	p := Problem{Path: path, Message: msg}
	p.Line, p.Column, _ = v.pos.at(path, key)
	v.problems = append(v.problems, p)
}

// agentSpec is an agent as far as it decodes: its spec without the
// parts the schema refused, and the index in the file of each of its
// tools.
type agentSpec struct {
	slug  string
	spec  *Spec
	tools []int
}

// agent checks agents[i]: what Parse checks of it and what the
// environment provides, leaving out the parts the schema refused (the
// paths in refused; an agent refused as a whole is not checked further).
func (v *validation) agent(i int, raw json.RawMessage, refused []string) *agentSpec {
	base := fmt.Sprintf("agents[%d]", i)
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return &agentSpec{}
	}
	a := &agentSpec{}
	_ = json.Unmarshal(fields["slug"], &a.slug)
	var tools []json.RawMessage
	_ = json.Unmarshal(fields["tools"], &tools)
	dropTool := map[int]bool{}
	for _, p := range refused {
		field, idx := topField(strings.TrimPrefix(p, base))
		switch {
		case field == "" || field == "slug" || field == "model":
			return a // the agent itself, its slug or its model: nothing more to check
		case field == "tools" && idx >= 0:
			dropTool[idx] = true
		default:
			delete(fields, field)
		}
	}
	if _, ok := fields["tools"]; ok {
		var kept []json.RawMessage
		for j, t := range tools {
			if !dropTool[j] {
				kept = append(kept, t)
				a.tools = append(a.tools, j)
			}
		}
		fields["tools"], _ = json.Marshal(kept)
	}
	repaired, _ := json.Marshal(fields)
	var s Spec
	d := json.NewDecoder(bytes.NewReader(repaired))
	d.DisallowUnknownFields()
	d.UseNumber()
	if err := d.Decode(&s); err != nil {
		v.add(base, false, err.Error())
		return a
	}
	a.spec = &s
	v.environment(base, a)
	v.build(base, s, append([]int(nil), a.tools...))
	return a
}

// build records every error build finds in s: after each, it leaves out
// the part the error names and builds again, until the rest builds or
// an error names no part it can leave out. tools are the file indexes
// of s's tools.
func (v *validation) build(base string, s Spec, tools []int) {
	last := ""
	for range 64 {
		_, err := build(s)
		if err == nil || err.Error() == last {
			return
		}
		last = err.Error()
		rel, msg := locate(strings.TrimPrefix(last, core.ErrInvalidInput.Error()+": "))
		path := base
		if rel != "" {
			path = base + "." + fileToolIndex(rel, tools)
		} else {
			msg = agentError(s.Slug, err)
		}
		v.add(path, false, msg)
		if !leaveOut(&s, &tools, rel) {
			return
		}
	}
}

// environment checks what agent a needs of the build: its model
// providers and its Go handlers.
func (v *validation) environment(base string, a *agentSpec) {
	s := a.spec
	if v.env.Providers != nil {
		check := func(path, p string) {
			if p != "" && !slices.Contains(v.env.Providers, p) {
				v.add(path, false, fmt.Sprintf("unknown provider %q (this build has %s)%s", p, strings.Join(v.env.Providers, ", "), didYouMean(p, v.env.Providers)))
			}
		}
		check(base+".model.provider", s.Model.Provider)
		if s.Compaction != nil && s.Compaction.Model != nil {
			check(base+".compaction.model.provider", s.Compaction.Model.Provider)
		}
	}
	if v.env.GoHandlers == nil {
		return
	}
	for k, t := range s.Tools {
		ex, _ := t["executor"].(map[string]any)
		h, _ := ex["handler"].(string)
		if ex["type"] != toolspec.TypeGo || h == "" || slices.Contains(v.env.GoHandlers, h) {
			continue
		}
		v.add(fmt.Sprintf("%s.tools[%d].executor.handler", base, a.tools[k]), false,
			fmt.Sprintf("no Go handler named %q is registered in this build (it has %s)%s", h, strings.Join(v.env.GoHandlers, ", "), didYouMean(h, v.env.GoHandlers)))
	}
}

// links checks across agents: duplicate slugs, and that handoffs and
// agent tools name agents of the file. It returns the slugs.
func (v *validation) links(specs []*agentSpec) []string {
	seen := map[string]int{}
	var slugs []string
	for i, a := range specs {
		if a.slug == "" {
			continue
		}
		if j, dup := seen[a.slug]; dup {
			v.add(fmt.Sprintf("agents[%d].slug", i), false, fmt.Sprintf("duplicate slug %q (agents[%d] has it too)", a.slug, j))
			continue
		}
		seen[a.slug] = i
		slugs = append(slugs, a.slug)
	}
	target := func(path, name string) {
		if _, ok := seen[name]; !ok && name != "" {
			v.add(path, false, fmt.Sprintf("%q is not an agent of this file (it has %s)%s", name, strings.Join(slugs, ", "), didYouMean(name, slugs)))
		}
	}
	for i, a := range specs {
		if a.spec == nil {
			continue
		}
		for j, h := range a.spec.Handoffs {
			path := fmt.Sprintf("agents[%d].handoffs[%d]", i, j)
			if h == a.slug {
				v.add(path, false, "an agent cannot hand off to itself")
				continue
			}
			target(path, h)
		}
		for k, t := range a.spec.Tools {
			if ex, _ := t["executor"].(map[string]any); ex["type"] == toolspec.TypeAgent {
				name, _ := ex["agent"].(string)
				target(fmt.Sprintf("agents[%d].tools[%d].executor.agent", i, a.tools[k]), name)
			}
		}
	}
	return slugs
}

// pathPrefix matches the path an error message starts with
// (tools[2].executor.url), the tool or server name that may follow it in
// brackets, and what follows.
var pathPrefix = regexp.MustCompile(`^([a-z_]+(?:\[\d+\])?(?:\.[a-z_]+(?:\[\d+\])?)*)(?: \(([^)]*)\))?(: | )`)

// locate splits a build error into the path of the agent's part it
// names (tools[2].executor.url; "" when it names none) and the rest of
// the message.
func locate(msg string) (path, rest string) {
	m := pathPrefix.FindStringSubmatch(msg)
	if m == nil {
		return "", msg
	}
	if field, _ := topField(m[1]); !specFields()[field] {
		if field == "budget" {
			return "budgets", msg
		}
		return "", msg
	}
	if m[3] == " " {
		return m[1], msg // "max_depth must be…": the path is part of the sentence
	}
	rest = msg[len(m[0]):]
	if sub, subRest := locateIn(rest); sub != "" {
		return m[1] + "." + sub, subRest
	}
	if m[2] != "" {
		rest = m[2] + ": " + rest // the tool's or server's name
	}
	return m[1], rest
}

// locateIn is locate for the message of a part (executor.url: …), whose
// path names no field of an agent.
func locateIn(msg string) (string, string) {
	m := pathPrefix.FindStringSubmatch(msg)
	if m == nil || m[3] != ": " || m[2] != "" {
		return "", msg
	}
	return m[1], msg[len(m[0]):]
}

// topField is the first member of a relative path (.tools[2].name →
// tools, 2) and its index, -1 when it has none.
func topField(rel string) (string, int) {
	rel = strings.TrimPrefix(rel, ".")
	end := strings.IndexAny(rel, ".[")
	if end < 0 {
		return rel, -1
	}
	field := rel[:end]
	if rel[end] == '[' {
		if n, _, ok := strings.Cut(rel[end+1:], "]"); ok {
			if i, err := strconv.Atoi(n); err == nil {
				return field, i
			}
		}
	}
	return field, -1
}

// fileToolIndex rewrites tools[k] at the start of rel to the index of
// that tool in the file.
func fileToolIndex(rel string, tools []int) string {
	field, k := topField(rel)
	if field != "tools" || k < 0 || k >= len(tools) {
		return rel
	}
	return fmt.Sprintf("tools[%d]", tools[k]) + rel[strings.Index(rel, "]")+1:]
}

// leaveOut removes from s the part rel names (a tool, or a field): false
// when there is none it can remove.
func leaveOut(s *Spec, tools *[]int, rel string) bool {
	field, k := topField(rel)
	switch {
	case field == "" || field == "slug" || field == "model":
		return false
	case field == "tools" && k >= 0 && k < len(s.Tools):
		s.Tools = slices.Delete(slices.Clone(s.Tools), k, k+1)
		*tools = slices.Delete(*tools, k, k+1)
		return true
	}
	rv := reflect.ValueOf(s).Elem()
	for i := range rv.NumField() {
		if jsonName(rv.Type().Field(i)) == field {
			rv.Field(i).SetZero()
			return true
		}
	}
	return false
}

// specFields are the names of Spec's fields in the file.
var specFields = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	t := reflect.TypeFor[Spec]()
	for i := range t.NumField() {
		out[jsonName(t.Field(i))] = true
	}
	return out
})

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
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
// cause (per unknown field), with its position, in the order of their
// paths.
func (v *validation) schemaProblems(ve *jsonschema.ValidationError) []Problem {
	var out []Problem
	seen := map[string]bool{}
	add := func(path string, key bool, msg string) {
		p := Problem{Path: path, Message: msg}
		p.Line, p.Column, _ = v.pos.at(path, key)
		if !seen[p.String()] {
			seen[p.String()] = true
			out = append(out, p)
		}
	}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		path := jsonPath(e.InstanceLocation)
		switch k := e.ErrorKind.(type) {
		case *kind.AdditionalProperties:
			known := schemaProperties(e.SchemaURL)
			for _, name := range k.Properties {
				add(joinPath(path, name), true, fmt.Sprintf("unknown field %q%s", name, didYouMean(name, known)))
			}
			return
		case *kind.Enum:
			if got, ok := k.Got.(string); ok {
				var want []string
				for _, w := range k.Want {
					if s, ok := w.(string); ok {
						want = append(want, s)
					}
				}
				add(path, false, e.ErrorKind.LocalizedString(printer)+didYouMean(got, want))
				return
			}
		}
		if msg, ok := plainMessage(e); ok || len(e.Causes) == 0 {
			if !ok {
				msg = e.ErrorKind.LocalizedString(printer)
			}
			add(path, false, msg)
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

// joinPath is path's member name.
func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// schemaProperties lists the properties the schema object at url (the
// location of an additionalProperties error) declares.
func schemaProperties(url string) []string {
	_, ptr, _ := strings.Cut(url, "#")
	ptr = strings.TrimSuffix(ptr, "/additionalProperties")
	var node any = schemaDoc()
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch n := node.(type) {
		case map[string]any:
			node = n[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n) {
				return nil
			}
			node = n[i]
		default:
			return nil
		}
	}
	m, _ := node.(map[string]any)
	props, _ := m["properties"].(map[string]any)
	out := make([]string, 0, len(props))
	for name := range props {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// schemaDoc is SchemaFile as JSON values.
var schemaDoc = sync.OnceValue(func() map[string]any {
	var m map[string]any
	if b, err := events.Schemas.ReadFile(SchemaFile); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
})

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
	case *kind.Not:
		if strings.HasSuffix(e.SchemaURL, "/$defs/tool/properties/name") {
			return "client/ and mcp/ tools are not declared here: client tools come with each API request, mcp/ tools from the agent's mcp_servers", true
		}
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
