package core

import (
	"encoding/json"
	"math"
	"strconv"
)

// accumulateUsage sums numeric usage fields into total and takes
// non-numeric ones from the latest turn. total_tokens is derived from
// prompt and completion tokens when the turn does not report it.
func accumulateUsage(total, turn map[string]any) {
	if len(turn) == 0 {
		return
	}
	// A generic map is read as it is (its values are copied into total),
	// anything else through its JSON.
	tm := turn
	if !isGeneric(turn) {
		g, err := ToJSONValue(turn)
		if err != nil {
			return
		}
		tm, _ = g.(map[string]any)
	}
	for k, v := range tm {
		if isNumber(v) {
			total[k] = addNumbers(total[k], v)
		} else {
			total[k] = cloneJSON(v)
		}
	}
	if _, has := tm["total_tokens"]; !has {
		p, pok := tm["prompt_tokens"]
		c, cok := tm["completion_tokens"]
		if pok || cok {
			total["total_tokens"] = addNumbers(total["total_tokens"], addNumbers(p, c))
		}
	}
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

// addNumbers adds two JSON numbers, staying integral when both are.
func addNumbers(a, b any) json.Number {
	ai, aInt := intOf(a)
	bi, bInt := intOf(b)
	if aInt && bInt {
		return json.Number(strconv.FormatInt(ai+bi, 10))
	}
	f := NumberOf(a) + NumberOf(b)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		f = 0
	}
	return json.Number(strconv.FormatFloat(f, 'f', -1, 64))
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
