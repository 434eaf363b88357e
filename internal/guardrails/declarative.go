package guardrails

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/baton-agents/baton/core"
)

// The declarative rules: regex, pii, max_length and json_schema. They
// check text:
//
//   - at the input stage, every user message of the model's view (so an
//     earlier message of the session is masked too, and a denied message,
//     which stays in the append-only transcript, keeps denying);
//   - at the output stage, the reply's content;
//   - at the tool stage, every string value in the call's arguments
//     (max_length: the arguments' canonical JSON).
//
// redact is for the input and output stages only.

func init() {
	Register("regex", newRegex)
	Register("pii", newPII)
	Register("max_length", newMaxLength)
	Register("json_schema", newJSONSchema)
}

// DefaultMask replaces what a redacting rule matched unless it sets mask.
const DefaultMask = "[REDACTED]"

// Rule actions.
const (
	ActionDeny   = "deny"
	ActionRedact = "redact"
)

// matcher finds what a pattern rule matches in text and masks it.
type matcher interface {
	// find reports what text contains (a short description for a deny
	// reason, never the matched text), or "".
	find(text string) string
	redact(text, mask string) string
}

// patternRule is a regex or pii rule.
type patternRule struct {
	m      matcher
	action string
	mask   string
}

func checkAction(action string, stage Stage) (string, error) {
	switch action {
	case "", ActionDeny:
		return ActionDeny, nil
	case ActionRedact:
		if stage == StageTool {
			return "", fmt.Errorf("action: redact applies to the input and output stages only; a tool rule can only deny")
		}
		return ActionRedact, nil
	}
	return "", fmt.Errorf("action: want %q or %q, got %q", ActionDeny, ActionRedact, action)
}

func (r patternRule) Check(_ context.Context, s Subject) (Verdict, error) {
	texts := subjectTexts(s)
	if r.action == ActionDeny {
		for _, t := range texts {
			if what := r.m.find(t.text); what != "" {
				return Verdict{Reason: fmt.Sprintf("%s %s", t.where, what)}, nil
			}
		}
		return Verdict{Allow: true}, nil
	}
	v := Verdict{Allow: true}
	for _, t := range texts {
		red := r.m.redact(t.text, r.mask)
		if red == t.text {
			continue
		}
		if s.Stage == StageOutput {
			v.Replacement = &red
			continue
		}
		if v.Redactions == nil {
			v.Redactions = map[int]string{}
		}
		v.Redactions[t.index] = red
	}
	return v, nil
}

// text is one text a rule checks: where names it in a deny reason.
type text struct {
	where string
	text  string
	index int
}

func subjectTexts(s Subject) []text {
	switch s.Stage {
	case StageInput:
		var out []text
		for i, m := range s.Messages {
			if m.Role == core.RoleUser {
				out = append(out, text{where: "a user message", text: m.Content, index: i})
			}
		}
		return out
	case StageOutput:
		return []text{{where: "the reply", text: s.Message.Content}}
	case StageTool:
		var out []text
		walkStrings(s.Args, "", func(path, v string) {
			out = append(out, text{where: "argument " + path + " of " + s.Tool, text: v})
		})
		return out
	}
	return nil
}

// walkStrings calls f for every string in v, in a stable order, with its
// JSON Pointer-like path.
func walkStrings(v any, path string, f func(path, v string)) {
	switch x := v.(type) {
	case string:
		f(path, x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walkStrings(x[k], path+"/"+k, f)
		}
	case []any:
		for i, e := range x {
			walkStrings(e, fmt.Sprintf("%s/%d", path, i), f)
		}
	}
}

// regex

type regexMatcher struct{ re *regexp.Regexp }

func (m regexMatcher) find(t string) string {
	if m.re.MatchString(t) {
		return "matches the pattern " + m.re.String()
	}
	return ""
}

func (m regexMatcher) redact(t, mask string) string {
	return m.re.ReplaceAllLiteralString(t, mask)
}

func newRegex(raw json.RawMessage, d Deps) (Rule, error) {
	var c struct {
		Type    string `json:"type"`
		Pattern string `json:"pattern"`
		Action  string `json:"action"`
		Mask    string `json:"mask"`
	}
	if err := DecodeStrict(raw, &c); err != nil {
		return nil, err
	}
	if c.Pattern == "" {
		return nil, fmt.Errorf("pattern is required")
	}
	re, err := regexp.Compile(c.Pattern)
	if err != nil {
		return nil, fmt.Errorf("pattern: %w", err)
	}
	if re.MatchString("") {
		return nil, fmt.Errorf("pattern: %q matches the empty string, so it would match every text", c.Pattern)
	}
	action, err := checkAction(c.Action, d.Stage)
	if err != nil {
		return nil, err
	}
	return patternRule{m: regexMatcher{re}, action: action, mask: maskOr(c.Mask)}, nil
}

func maskOr(m string) string {
	if m == "" {
		return DefaultMask
	}
	return m
}

// pii

// PII entities.
const (
	EntityEmail      = "email"
	EntityPhone      = "phone"
	EntityCardNumber = "card_number"
)

// entityOrder is the order entities are looked for: card numbers
// first, so their digits are masked before the phone pattern sees them.
var entityOrder = []string{EntityCardNumber, EntityEmail, EntityPhone}

var (
	emailRE = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}`)
	// cardRE: a run of digits with optional single spaces or dashes
	// between them; it is a card number when it has 13 to 19 digits and
	// passes the Luhn check.
	cardRE = regexp.MustCompile(`\d(?:[ -]?\d)+`)
	// phoneRE: an optional +, then digits with spaces, dots, dashes or
	// parentheses between them; a phone number has 10 to 15 digits (7 to
	// 15 after a +).
	phoneRE = regexp.MustCompile(`\+?\(?\d(?:[ .()-]{0,2}\d)+`)
	// isoDateRE: dates are not phone numbers.
	isoDateRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}`)
)

type piiMatcher struct{ entities map[string]bool }

// spans returns where entity occurs in t.
func spans(entity, t string) [][]int {
	switch entity {
	case EntityEmail:
		return emailRE.FindAllStringIndex(t, -1)
	case EntityCardNumber:
		return filterSpans(t, cardRE.FindAllStringIndex(t, -1), func(s string) bool {
			d := digits(s)
			return len(d) >= 13 && len(d) <= 19 && Luhn(d)
		})
	case EntityPhone:
		return filterSpans(t, phoneRE.FindAllStringIndex(t, -1), func(s string) bool {
			n := len(digits(s))
			if isoDateRE.MatchString(s) {
				return false
			}
			if strings.HasPrefix(s, "+") {
				return n >= 7 && n <= 15
			}
			return n >= 10 && n <= 15
		})
	}
	return nil
}

// filterSpans keeps the spans whose text passes ok and is not part of a
// longer word or number.
func filterSpans(t string, in [][]int, ok func(string) bool) [][]int {
	var out [][]int
	for _, sp := range in {
		if sp[0] > 0 && isWordByte(t[sp[0]-1]) || sp[1] < len(t) && isWordByte(t[sp[1]]) {
			continue
		}
		if ok(t[sp[0]:sp[1]]) {
			out = append(out, sp)
		}
	}
	return out
}

func isWordByte(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_'
}

func digits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Luhn reports whether a string of digits passes the Luhn checksum.
func Luhn(ds string) bool {
	if ds == "" {
		return false
	}
	sum := 0
	double := false
	for i := len(ds) - 1; i >= 0; i-- {
		c := ds[i]
		if c < '0' || c > '9' {
			return false
		}
		n := int(c - '0')
		if double {
			n *= 2
			if n > 9 {
				n -= 9
			}
		}
		sum += n
		double = !double
	}
	return sum%10 == 0
}

func (m piiMatcher) find(t string) string {
	for _, e := range entityOrder {
		if m.entities[e] && len(spans(e, t)) > 0 {
			return "contains " + strings.ReplaceAll(e, "_", " ")
		}
	}
	return ""
}

func (m piiMatcher) redact(t, mask string) string {
	for _, e := range entityOrder {
		if !m.entities[e] {
			continue
		}
		sp := spans(e, t)
		for i := len(sp) - 1; i >= 0; i-- {
			t = t[:sp[i][0]] + mask + t[sp[i][1]:]
		}
	}
	return t
}

func newPII(raw json.RawMessage, d Deps) (Rule, error) {
	var c struct {
		Type     string   `json:"type"`
		Entities []string `json:"entities"`
		Action   string   `json:"action"`
		Mask     string   `json:"mask"`
	}
	if err := DecodeStrict(raw, &c); err != nil {
		return nil, err
	}
	if len(c.Entities) == 0 {
		return nil, fmt.Errorf("entities: want at least one of %s", strings.Join(entityOrder, ", "))
	}
	m := piiMatcher{entities: map[string]bool{}}
	for i, e := range c.Entities {
		switch e {
		case EntityEmail, EntityPhone, EntityCardNumber:
			m.entities[e] = true
		default:
			return nil, fmt.Errorf("entities[%d]: unknown entity %q (want %s)", i, e, strings.Join(entityOrder, ", "))
		}
	}
	action, err := checkAction(c.Action, d.Stage)
	if err != nil {
		return nil, err
	}
	return patternRule{m: m, action: action, mask: maskOr(c.Mask)}, nil
}

// max_length

type maxLength struct{ chars int }

func newMaxLength(raw json.RawMessage, _ Deps) (Rule, error) {
	var c struct {
		Type  string `json:"type"`
		Chars int    `json:"chars"`
	}
	if err := DecodeStrict(raw, &c); err != nil {
		return nil, err
	}
	if c.Chars <= 0 {
		return nil, fmt.Errorf("chars: want a positive number of characters, got %d", c.Chars)
	}
	return maxLength{c.Chars}, nil
}

func (r maxLength) Check(_ context.Context, s Subject) (Verdict, error) {
	var texts []text
	if s.Stage == StageTool {
		b, err := core.CanonicalJSON(s.Args)
		if err != nil {
			return Verdict{}, err
		}
		texts = []text{{where: "the arguments of " + s.Tool, text: string(b)}}
	} else {
		texts = subjectTexts(s)
	}
	for _, t := range texts {
		if n := utf8.RuneCountInString(t.text); n > r.chars {
			return Verdict{Reason: fmt.Sprintf("%s is %d characters long, over the limit of %d", t.where, n, r.chars)}, nil
		}
	}
	return Verdict{Allow: true}, nil
}

// json_schema

type jsonSchema struct {
	schema map[string]any
	tools  map[string]bool
}

func newJSONSchema(raw json.RawMessage, d Deps) (Rule, error) {
	if d.Stage != StageTool {
		return nil, fmt.Errorf("json_schema checks tool arguments: it belongs in guardrails.tool, not guardrails.%s", d.Stage)
	}
	var c struct {
		Type   string         `json:"type"`
		Schema map[string]any `json:"schema"`
		Tools  []string       `json:"tools"`
	}
	if err := DecodeStrict(raw, &c); err != nil {
		return nil, err
	}
	if len(c.Schema) == 0 {
		return nil, fmt.Errorf("schema is required")
	}
	if err := core.CheckSchema(c.Schema); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	r := jsonSchema{schema: c.Schema}
	if len(c.Tools) > 0 {
		r.tools = map[string]bool{}
		for _, t := range c.Tools {
			r.tools[t] = true
		}
	}
	return r, nil
}

func (r jsonSchema) Check(_ context.Context, s Subject) (Verdict, error) {
	if r.tools != nil && !r.tools[s.Tool] {
		return Verdict{Allow: true}, nil
	}
	prob, err := core.ValidateParameters(r.schema, s.Args)
	if err != nil {
		return Verdict{}, err
	}
	switch {
	case prob == nil:
		return Verdict{Allow: true}, nil
	case len(prob.Missing) > 0:
		return Verdict{Reason: fmt.Sprintf("arguments of %s are missing %s", s.Tool, strings.Join(prob.Missing, ", "))}, nil
	}
	return Verdict{Reason: fmt.Sprintf("arguments of %s do not match the guardrail schema: %s", s.Tool, prob.Detail)}, nil
}
