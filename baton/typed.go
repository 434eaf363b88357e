package baton

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"unsafe"
)

// flatStruct is how a parameter struct whose fields are all plain JSON
// scalars is filled from a call's parameters without a JSON round trip:
// its fields by JSON name. It is nil for any other P, which is decoded
// with encoding/json.
type flatStruct map[string]flatField

type flatField struct {
	offset uintptr
	kind   reflect.Kind
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decodesItself reports whether encoding/json hands t's values to a
// decoder of their own.
func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(jsonUnmarshaler) || p.Implements(textUnmarshaler)
}

// plainName reports whether a JSON tag name is one encoding/json takes
// as it is (it falls back to the field's name for some others).
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// flatStructOf returns the plan of P, or nil when P is not a struct of
// exported scalar fields (string, bool, integers, floats) decoded the
// default way: no embedded field, no ",string" option, no custom decoder.
func flatStructOf[P any]() flatStruct {
	t := reflect.TypeFor[P]()
	if t.Kind() != reflect.Struct || decodesItself(t) {
		return nil
	}
	plan := flatStruct{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, comma := cutComma(f.Tag.Get("json"))
		switch {
		case name == "-" && !comma:
			continue
		case f.Anonymous || opts != "" && opts != "omitempty" && opts != "omitzero" || !plainName(name):
			return nil
		case name == "":
			name = f.Name
		}
		if decodesItself(f.Type) {
			return nil
		}
		switch k := f.Type.Kind(); k {
		case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
			if _, dup := plan[name]; dup {
				return nil
			}
			plan[name] = flatField{offset: f.Offset, kind: k}
		default:
			return nil
		}
	}
	return plan
}

func cutComma(tag string) (name, opts string, found bool) {
	for i := 0; i < len(tag); i++ {
		if tag[i] == ',' {
			return tag[:i], tag[i+1:], true
		}
	}
	return tag, "", false
}

// fill sets the fields of the P at p from params and reports whether it
// could: every key names a field exactly and every value is what
// encoding/json would decode into it without question (a string, a
// bool, a JSON number that fits, or null). Otherwise the caller decodes
// with encoding/json, which matches names without case and reports the
// errors. p points to a P of the plan's type (a local the caller keeps
// on its stack); each field is written through its offset as its kind.
func (plan flatStruct) fill(p unsafe.Pointer, params map[string]any) bool {
	for k, x := range params {
		f, ok := plan[k]
		if !ok {
			return false
		}
		if x == nil {
			continue
		}
		at := unsafe.Add(p, f.offset)
		switch f.kind {
		case reflect.String:
			s, ok := x.(string)
			if !ok {
				return false
			}
			*(*string)(at) = s
		case reflect.Bool:
			b, ok := x.(bool)
			if !ok {
				return false
			}
			*(*bool)(at) = b
		default:
			n, ok := x.(json.Number)
			if !ok || !setNumber(at, f.kind, string(n)) {
				return false
			}
		}
	}
	return true
}

// setNumber parses a JSON number into the integer or float of kind at.
func setNumber(at unsafe.Pointer, kind reflect.Kind, n string) bool {
	switch kind {
	case reflect.Float32, reflect.Float64:
		bits := 64
		if kind == reflect.Float32 {
			bits = 32
		}
		f, err := strconv.ParseFloat(n, bits)
		if err != nil {
			return false
		}
		if bits == 32 {
			*(*float32)(at) = float32(f)
		} else {
			*(*float64)(at) = f
		}
		return true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u, err := strconv.ParseUint(n, 10, kindBits(kind))
		if err != nil {
			return false
		}
		switch kind {
		case reflect.Uint8:
			*(*uint8)(at) = uint8(u)
		case reflect.Uint16:
			*(*uint16)(at) = uint16(u)
		case reflect.Uint32:
			*(*uint32)(at) = uint32(u)
		case reflect.Uint64:
			*(*uint64)(at) = u
		default:
			*(*uint)(at) = uint(u)
		}
		return true
	}
	i, err := strconv.ParseInt(n, 10, kindBits(kind))
	if err != nil {
		return false
	}
	switch kind {
	case reflect.Int8:
		*(*int8)(at) = int8(i)
	case reflect.Int16:
		*(*int16)(at) = int16(i)
	case reflect.Int32:
		*(*int32)(at) = int32(i)
	case reflect.Int64:
		*(*int64)(at) = i
	default:
		*(*int)(at) = int(i)
	}
	return true
}

// kindBits is the size in bits of an integer kind.
func kindBits(kind reflect.Kind) int {
	switch kind {
	case reflect.Int8, reflect.Uint8:
		return 8
	case reflect.Int16, reflect.Uint16:
		return 16
	case reflect.Int32, reflect.Uint32:
		return 32
	case reflect.Int64, reflect.Uint64:
		return 64
	}
	return strconv.IntSize
}
