package core

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestMergeRuntime: a result's runtime metadata over the declaration's,
// either alone, and nil when neither has any.
func TestMergeRuntime(t *testing.T) {
	for _, tc := range []struct {
		name       string
		decl, exec map[string]any
		want       map[string]any
	}{
		{"neither", nil, nil, nil},
		{"declared only", map[string]any{"region": "eu"}, nil, map[string]any{"region": "eu"}},
		{"result only", nil, map[string]any{"latency_ms": json.Number("12")}, map[string]any{"latency_ms": json.Number("12")}},
		{"result over declared", map[string]any{"region": "eu", "tier": "a"}, map[string]any{"region": "us"}, map[string]any{"region": "us", "tier": "a"}},
	} {
		if got := mergeRuntime(tc.decl, tc.exec); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestNormalizeCitations: fields of the wrong type are dropped, and a
// citation left with no field at all is dropped with them, as are
// entries that are not objects.
func TestNormalizeCitations(t *testing.T) {
	got := NormalizeCitations([]any{
		map[string]any{"source": 1, "score": "high", "access_status": "maybe"},
		"not an object",
		map[string]any{"source": "wiki", "score": json.Number("0.5"), "access_status": "denied", "page": json.Number("3"), "source_url": false},
	})
	want := []any{map[string]any{"source": "wiki", "score": json.Number("0.5"), "access_status": "denied", "page": json.Number("3")}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("citations %v, want %v", got, want)
	}
}
