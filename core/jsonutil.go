package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// RedactedValue replaces the value of every sensitive key before hashing,
// logging or emitting parameters.
const RedactedValue = "[redacted]"

// DecodeJSON decodes exactly one JSON value, keeping numbers as
// json.Number so that round trips never change a value. Stores use it to
// read back what they wrote.
func DecodeJSON(data []byte, v any) error { return decodeJSON(data, v) }

func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("unexpected data after the JSON value")
	}
	return nil
}

// ToJSONValue converts any JSON-marshalable Go value into its generic form
// (map[string]any, []any, string, json.Number, bool, nil).
func ToJSONValue(v any) (any, error) {
	if isGeneric(v) {
		return cloneJSON(v), nil
	}
	b, err := marshalNoEscape(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := decodeJSON(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// ToJSONObject converts v into a generic JSON object; it fails when v is
// not an object.
func ToJSONObject(v any) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	g, err := ToJSONValue(v)
	if err != nil {
		return nil, err
	}
	m, ok := g.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("expected a JSON object, got %s", jsonKind(g))
	}
	return m, nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// CanonicalJSON encodes v with object keys sorted, no insignificant white
// space and no HTML escaping. Equal JSON values give equal bytes.
func CanonicalJSON(v any) ([]byte, error) {
	if b, _, ok := appendCanonical(nil, v, false); ok {
		return b, nil
	}
	if isGeneric(v) {
		// encoding/json already sorts map keys.
		return marshalNoEscape(v)
	}
	g, err := ToJSONValue(v)
	if err != nil {
		return nil, err
	}
	return marshalNoEscape(g)
}

// isGeneric reports whether v is made only of generic JSON values, whose
// encoding is already canonical.
func isGeneric(v any) bool {
	switch t := v.(type) {
	case nil, string, bool, json.Number:
		return true
	case map[string]any:
		for _, x := range t {
			if !isGeneric(x) {
				return false
			}
		}
		return true
	case []any:
		for _, x := range t {
			if !isGeneric(x) {
				return false
			}
		}
		return true
	}
	return false
}

// sensitiveKeyParts are matched against a key with case, '-' and '_'
// folded away.
var sensitiveKeyParts = []string{
	"token", "secret", "password", "passwd", "passphrase", "authorization",
	"cookie", "credential", "nonce", "apikey", "privatekey", "accesskey",
	"signature", "sessionid",
}

// sensitiveKeyFold drops the separators a sensitive key may be spelled
// with; a Replacer is safe for concurrent use.
var sensitiveKeyFold = strings.NewReplacer("-", "", "_", "", " ", "", ".", "")

// IsSensitiveKey reports whether a parameter or metadata key names a value
// that must never be logged, hashed in the clear or shown to observers.
func IsSensitiveKey(key string) bool {
	k := sensitiveKeyFold.Replace(strings.ToLower(key))
	for _, p := range sensitiveKeyParts {
		if strings.Contains(k, p) {
			return true
		}
	}
	return false
}

// Redact returns a deep copy of a generic JSON value with the value of every
// sensitive key replaced by RedactedValue, and whether anything was
// replaced.
func Redact(v any) (any, bool) {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		red := false
		for k, val := range t {
			if IsSensitiveKey(k) {
				out[k] = RedactedValue
				red = true
				continue
			}
			rv, r := Redact(val)
			out[k] = rv
			red = red || r
		}
		return out, red
	case []any:
		out := make([]any, len(t))
		red := false
		for i, val := range t {
			rv, r := Redact(val)
			out[i] = rv
			red = red || r
		}
		return out, red
	default:
		return v, false
	}
}

// RedactedParameters returns the redacted copy of tool parameters used by
// events, logs and step messages.
func RedactedParameters(p map[string]any) map[string]any {
	if p == nil {
		return map[string]any{}
	}
	r, _ := Redact(p)
	return r.(map[string]any)
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number, float64, int, int64:
		return "number"
	default:
		return fmt.Sprintf("%T", v)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// cloneJSON deep-copies a generic JSON value.
func cloneJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			out[k] = cloneJSON(val)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = cloneJSON(val)
		}
		return out
	default:
		return v
	}
}

func cloneObject(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return cloneJSON(m).(map[string]any)
}

func paramsValue(p map[string]any) any {
	if p == nil {
		return map[string]any{}
	}
	return p
}
