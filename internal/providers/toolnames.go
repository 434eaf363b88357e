package providers

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/baton-agents/baton/core"
)

// MaxWireName is the longest function name or tool-call id the providers
// accept.
const MaxWireName = 64

// hashLen is the number of hex digits of the suffix that disambiguates a
// mapped name.
const hashLen = 8

// ToolNames maps the Baton tool names of one request to provider function
// names and back. Build it with NewToolNames from the request's declared
// tools; the zero value maps every name by the stateless rule alone.
type ToolNames struct {
	toWire   map[string]string
	fromWire map[string]string
}

// NewToolNames maps the declared tool names. The result depends only on
// the set of names, not on their order.
func NewToolNames(decls []core.ToolDeclaration) *ToolNames {
	t := &ToolNames{toWire: map[string]string{}, fromWire: map[string]string{}}
	bases := map[string][]string{}
	for _, d := range decls {
		if _, seen := t.toWire[d.Name]; seen {
			continue
		}
		t.toWire[d.Name] = ""
		b := wireBase(d.Name)
		bases[b] = append(bases[b], d.Name)
	}
	// Names whose base is unique and valid keep it; the others get a hash
	// suffix.
	for b, names := range bases {
		if len(names) == 1 && validWire(b) {
			t.toWire[names[0]] = b
			t.fromWire[b] = names[0]
		}
	}
	for b, names := range bases {
		if len(names) == 1 && validWire(b) {
			continue
		}
		for _, n := range names {
			w := t.hashed(n)
			t.toWire[n] = w
			t.fromWire[w] = n
		}
	}
	return t
}

// hashed returns the hash-suffixed form of name, lengthening the hash in
// the (astronomically unlikely) case it is already taken.
func (t *ToolNames) hashed(name string) string {
	sum := sha256.Sum256([]byte(name))
	hx := hex.EncodeToString(sum[:])
	for n := hashLen; ; n += 4 {
		if n > len(hx) {
			n = len(hx)
		}
		suffix := "_" + hx[:n]
		base := wireBase(name)
		if max := MaxWireName - len(suffix); len(base) > max {
			base = base[:max]
		}
		w := base + suffix
		if owner, taken := t.fromWire[w]; !taken || owner == name || n == len(hx) {
			return w
		}
	}
}

// Wire returns the provider function name of a Baton tool name. A name the
// request did not declare (a call in an earlier part of the transcript)
// is mapped by the same rule, hashed when its mapped form is invalid or
// belongs to a declared tool.
func (t *ToolNames) Wire(name string) string {
	if t != nil {
		if w, ok := t.toWire[name]; ok {
			return w
		}
	}
	b := wireBase(name)
	if t != nil {
		if _, taken := t.fromWire[b]; taken {
			return t.hashed(name)
		}
	}
	if !validWire(b) {
		return (&ToolNames{}).hashed(name)
	}
	return b
}

// Baton returns the Baton tool name of a function name from a reply: the
// declared tool it was mapped from, or the function name itself when the
// request declared no such tool.
func (t *ToolNames) Baton(wire string) string {
	if t != nil {
		if n, ok := t.fromWire[wire]; ok {
			return n
		}
	}
	return wire
}

// wireBase applies the character rule: '/' becomes "__", any other
// character outside [a-zA-Z0-9_-] becomes '_'.
func wireBase(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '/':
			b.WriteString("__")
		case wireChar(c):
			b.WriteByte(c)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

func wireChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func validWire(s string) bool {
	if s == "" || len(s) > MaxWireName {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !wireChar(s[i]) {
			return false
		}
	}
	return true
}

// WireID returns a tool-call id the strict providers accept
// (^[a-zA-Z0-9_-]{1,64}$): a valid id is returned unchanged; any other id
// has its invalid characters replaced by '_' and gets a hash suffix, so
// two different ids never map to the same one. The mapping is a pure
// function, so a tool_call and its tool_result keep matching ids.
func WireID(id string) string {
	if validWire(id) {
		return id
	}
	return (&ToolNames{}).hashed(id)
}
