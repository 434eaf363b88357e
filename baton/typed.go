package baton

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
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
		name, opts, comma := strings.Cut(f.Tag.Get("json"), ",")
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
		k := f.Type.Kind()
		if _, dup := plan[name]; dup || !(k == reflect.String || k == reflect.Bool || reflect.Int <= k && k <= reflect.Uint64 || k == reflect.Float32 || k == reflect.Float64) {
			return nil
		}
		plan[name] = flatField{offset: f.Offset, kind: k}
	}
	return plan
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
		if x != nil && !set(unsafe.Add(p, f.offset), f.kind, x) {
			return false
		}
	}
	return true
}

// set writes a JSON value at a field of kind, or reports that
// encoding/json must decide. (A switch of direct calls, unlike a table of
// functions, lets the compiler see the field's struct stays on the stack.)
func set(at unsafe.Pointer, kind reflect.Kind, x any) bool {
	switch kind {
	case reflect.String:
		s, ok := x.(string)
		*(*string)(at) = s
		return ok
	case reflect.Bool:
		b, ok := x.(bool)
		*(*bool)(at) = b
		return ok
	case reflect.Int:
		return setInt[int](at, x)
	case reflect.Int8:
		return setInt[int8](at, x)
	case reflect.Int16:
		return setInt[int16](at, x)
	case reflect.Int32:
		return setInt[int32](at, x)
	case reflect.Int64:
		return setInt[int64](at, x)
	case reflect.Uint:
		return setUint[uint](at, x)
	case reflect.Uint8:
		return setUint[uint8](at, x)
	case reflect.Uint16:
		return setUint[uint16](at, x)
	case reflect.Uint32:
		return setUint[uint32](at, x)
	case reflect.Uint64:
		return setUint[uint64](at, x)
	case reflect.Float32:
		return setFloat[float32](at, x)
	default:
		return setFloat[float64](at, x)
	}
}

// setInt, setUint and setFloat parse a JSON number that fits T.
func setInt[T int | int8 | int16 | int32 | int64](at unsafe.Pointer, x any) bool {
	n, _ := x.(json.Number)
	i, err := strconv.ParseInt(string(n), 10, int(unsafe.Sizeof(T(0)))*8)
	*(*T)(at) = T(i)
	return err == nil
}

func setUint[T uint | uint8 | uint16 | uint32 | uint64](at unsafe.Pointer, x any) bool {
	n, _ := x.(json.Number)
	u, err := strconv.ParseUint(string(n), 10, int(unsafe.Sizeof(T(0)))*8)
	*(*T)(at) = T(u)
	return err == nil
}

func setFloat[T float32 | float64](at unsafe.Pointer, x any) bool {
	n, _ := x.(json.Number)
	f, err := strconv.ParseFloat(string(n), int(unsafe.Sizeof(T(0)))*8)
	*(*T)(at) = T(f)
	return err == nil
}
