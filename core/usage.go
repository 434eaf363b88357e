package core

import (
	"encoding/json"
	"math"
	"strconv"
)

// Usage is a run's token usage: every numeric field its model calls
// reported, summed (prompt_tokens, completion_tokens, total_tokens and
// whatever else the provider counts), the latest value of each
// non-numeric field (a provider's details objects), and the compaction
// line (UsageCompaction), the summary calls' own totals. Totals are
// numbers, integral while every addend is, and a Usage is copied on
// write: a copy of a RunState shares what it has not changed.
//
// It encodes as the JSON object it always was ({"completion_tokens":8,
// …, "compaction":{…}}, keys sorted) and reads that object back.
type Usage struct {
	// n counts head's totals; more holds those past it. more, other and
	// compaction are never changed in place once shared.
	n          int
	head       [4]usageTotal
	more       []usageTotal
	other      map[string]any
	compaction *Usage
}

// usageTotal is one summed field: an integer, or a float once a
// non-integral number was added.
type usageTotal struct {
	key     string
	i       int64
	f       float64
	isFloat bool
}

// newUsage is a run's usage before its first model call: the three
// OpenAI-style totals at zero.
func newUsage() Usage {
	var u Usage
	for _, k := range []string{"prompt_tokens", "completion_tokens", "total_tokens"} {
		u.total(k)
	}
	return u
}

func (c *usageTotal) number() float64 {
	if c.isFloat {
		return c.f
	}
	return float64(c.i)
}

// add adds a JSON number, staying integral when both are.
func (c *usageTotal) add(v any) {
	if vi, ok := intOf(v); ok && !c.isFloat {
		c.i += vi
		return
	}
	f := c.number() + NumberOf(v)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		f = 0
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
		c.i, c.f, c.isFloat = int64(f), 0, false
		return
	}
	c.f, c.isFloat = f, true
}

func (c *usageTotal) value() json.Number {
	if c.isFloat {
		return json.Number(strconv.FormatFloat(c.f, 'f', -1, 64))
	}
	return json.Number(strconv.FormatInt(c.i, 10))
}

// locate finds the total named key: head[i], or more[i] when inMore.
func (u *Usage) locate(key string) (i int, inMore, ok bool) {
	for i := 0; i < u.n; i++ {
		if u.head[i].key == key {
			return i, false, true
		}
	}
	for i := range u.more {
		if u.more[i].key == key {
			return i, true, true
		}
	}
	return 0, false, false
}

// find returns the total named key, or nil.
func (u *Usage) find(key string) *usageTotal {
	switch i, inMore, ok := u.locate(key); {
	case !ok:
		return nil
	case inMore:
		return &u.more[i]
	default:
		return &u.head[i]
	}
}

// total returns the total named key for changing it, adding it at zero
// when it is missing; more is copied first, as a copy may share it.
func (u *Usage) total(key string) *usageTotal {
	if i, inMore, ok := u.locate(key); ok {
		if !inMore {
			return &u.head[i]
		}
		u.more = append([]usageTotal(nil), u.more...)
		return &u.more[i]
	}
	if u.n < len(u.head) {
		u.head[u.n] = usageTotal{key: key}
		u.n++
		return &u.head[u.n-1]
	}
	u.more = append(u.more[:len(u.more):len(u.more)], usageTotal{key: key})
	return &u.more[len(u.more)-1]
}

// drop removes the total named key.
func (u *Usage) drop(key string) {
	switch i, inMore, ok := u.locate(key); {
	case !ok:
	case inMore:
		u.more = append(u.more[:i:i], u.more[i+1:]...)
	default:
		copy(u.head[i:u.n], u.head[i+1:u.n])
		u.n--
	}
}

// Number is the total named key (0 when there is none).
func (u Usage) Number(key string) float64 {
	if c := u.find(key); c != nil {
		return c.number()
	}
	return 0
}

// Add counts one model call's usage: numeric fields are added to the
// totals, others replace the previous call's, and total_tokens is
// derived from prompt and completion tokens when the call does not
// report it.
func (u *Usage) Add(turn map[string]any) {
	var promptOrCompletion bool
	for k, v := range turn {
		if isNumber(v) {
			u.total(k).add(v)
			if _, had := u.other[k]; had {
				u.setOther(k, nil)
			}
			promptOrCompletion = promptOrCompletion || k == "prompt_tokens" || k == "completion_tokens"
			continue
		}
		if !isGeneric(v) {
			g, err := ToJSONValue(v)
			if err != nil {
				continue
			}
			v = g
		}
		u.drop(k)
		u.setOther(k, cloneJSON(v))
	}
	if _, has := turn["total_tokens"]; !has && promptOrCompletion {
		t := u.total("total_tokens")
		t.add(turn["prompt_tokens"])
		t.add(turn["completion_tokens"])
	}
}

// setOther sets (or, for nil, deletes) a non-numeric field on a copy of
// the map.
func (u *Usage) setOther(k string, v any) {
	m := make(map[string]any, len(u.other)+1)
	for ok, ov := range u.other {
		m[ok] = ov
	}
	if v == nil {
		delete(m, k)
	} else {
		m[k] = v
	}
	u.other = m
}

// addCompaction counts a summary call's usage (already normalized: a
// Usage's Map) in the totals and on the compaction line.
func (u *Usage) addCompaction(call map[string]any) {
	line := newUsage()
	if u.compaction != nil {
		line = u.compaction.clone()
	}
	u.Add(call)
	line.Add(call)
	u.compaction = &line
}

// clone is a copy that shares nothing changeable with u.
func (u Usage) clone() Usage {
	u.more = append([]usageTotal(nil), u.more...)
	return u
}

// totals lists every total.
func (u *Usage) totals() []usageTotal {
	return append(u.head[:u.n:u.n], u.more...)
}

// IsEmpty reports whether the usage holds nothing.
func (u Usage) IsEmpty() bool {
	return u.n == 0 && len(u.more) == 0 && len(u.other) == 0 && u.compaction == nil
}

// Map is the usage as a generic JSON object (numbers as json.Number),
// as the envelope and the API show it.
func (u Usage) Map() map[string]any {
	m := make(map[string]any, u.n+len(u.more)+len(u.other)+1)
	for k, v := range u.other {
		m[k] = cloneJSON(v)
	}
	for _, c := range u.totals() {
		m[c.key] = c.value()
	}
	if u.compaction != nil {
		m[UsageCompaction] = u.compaction.Map()
	}
	return m
}

// MarshalJSON encodes the usage as its JSON object (Map), keys sorted.
func (u Usage) MarshalJSON() ([]byte, error) { return marshalNoEscape(u.Map()) }

// UnmarshalJSON reads the object MarshalJSON writes (null is empty).
func (u *Usage) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if err := decodeJSON(b, &m); err != nil {
		return err
	}
	*u = usageFrom(m, true)
	return nil
}

// usageFrom reads a usage object: its numbers are totals, its
// compaction object (at the top) the compaction line, the rest other
// fields.
func usageFrom(m map[string]any, top bool) Usage {
	var u Usage
	for k, v := range m {
		switch line, isObject := v.(map[string]any); {
		case isNumber(v):
			u.total(k).add(v)
		case top && k == UsageCompaction && isObject:
			lu := usageFrom(line, false)
			u.compaction = &lu
		default:
			if u.other == nil {
				u.other = map[string]any{}
			}
			u.other[k] = v
		}
	}
	return u
}

func isNumber(v any) bool {
	switch v.(type) {
	case json.Number, float64, int, int64:
		return true
	}
	return false
}

// NumberOf is a JSON number of a usage map (json.Number, float64, int or
// int64) as a float64; anything else is 0.
func NumberOf(v any) float64 {
	switch t := v.(type) {
	case json.Number:
		f, _ := t.Float64()
		return f
	case float64:
		return t
	case int:
		return float64(t)
	case int64:
		return float64(t)
	}
	return 0
}

func intOf(v any) (int64, bool) {
	switch t := v.(type) {
	case nil:
		return 0, true
	case json.Number:
		i, err := t.Int64()
		return i, err == nil
	case int:
		return int64(t), true
	case int64:
		return t, true
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1<<53 {
			return int64(t), true
		}
	}
	return 0, false
}
