package core

import "encoding/json"

// simpleSchema is a parameter schema simple enough to check without the
// general validator: an object schema whose keywords are only type,
// properties, required, additionalProperties (a boolean), description and
// title, and whose properties each say at most a type name, a
// description and a title. It is used only to accept: when it cannot
// tell that arguments are valid, the general validator decides (and
// writes the problem), so it never changes an outcome. Every keyword's
// value has the type the metaschema asks for (required: distinct
// strings; description and title: strings), so a simple schema is a
// valid one, which checkSchema accepts without compiling.
type simpleSchema struct {
	props  map[string]string // property name: its type name ("" for any)
	closed bool              // additionalProperties: false
}

// simpleSchemaOf returns schema as a simpleSchema, or nil when it uses
// anything else.
func simpleSchemaOf(schema map[string]any) *simpleSchema {
	s := &simpleSchema{props: map[string]string{}}
	for k, v := range schema {
		switch k {
		case "type":
			if v != "object" {
				return nil
			}
		case "description", "title":
			if _, ok := v.(string); !ok {
				return nil
			}
		case "required":
			if !distinctStrings(v) {
				return nil
			}
		case "additionalProperties":
			b, ok := v.(bool)
			if !ok {
				return nil
			}
			s.closed = !b
		case "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			for name, p := range props {
				pm, ok := p.(map[string]any)
				if !ok {
					return nil
				}
				typ := ""
				for pk, pv := range pm {
					switch pk {
					case "description", "title":
						if _, ok := pv.(string); !ok {
							return nil
						}
					case "type":
						t, ok := pv.(string)
						if !ok || !simpleTypes[t] {
							return nil
						}
						typ = t
					default:
						return nil
					}
				}
				s.props[name] = typ
			}
		default:
			return nil
		}
	}
	return s
}

// distinctStrings reports whether v is a JSON array of distinct strings.
func distinctStrings(v any) bool {
	a, ok := v.([]any)
	if !ok {
		return false
	}
	seen := make(map[string]bool, len(a))
	for _, x := range a {
		s, ok := x.(string)
		if !ok || seen[s] {
			return false
		}
		seen[s] = true
	}
	return true
}

var simpleTypes = map[string]bool{"string": true, "integer": true, "number": true, "boolean": true, "object": true, "array": true, "null": true}

// accepts reports whether args certainly validate against the schema
// (the required list is checked before, by validateCompiled).
func (s *simpleSchema) accepts(args map[string]any) bool {
	for k, v := range args {
		typ, declared := s.props[k]
		if !declared {
			if s.closed {
				return false
			}
			continue
		}
		if !simpleTypeOK(typ, v) {
			return false
		}
	}
	return true
}

func simpleTypeOK(typ string, v any) bool {
	switch typ {
	case "":
		return true
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "number":
		n, ok := v.(json.Number)
		return ok && isValidJSONNumber(string(n))
	case "integer":
		n, ok := v.(json.Number)
		if !ok || !isValidJSONNumber(string(n)) {
			return false
		}
		for i, c := range string(n) {
			if (c < '0' || c > '9') && (i > 0 || c != '-') {
				return false
			}
		}
		return true
	}
	return false
}
