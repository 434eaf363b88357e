package httpapi_test

import (
	"testing"
	"time"

	"github.com/baton-agents/baton/internal/httpapi"
)

// TestConfigDefaults: the API's documented defaults fill a zero or
// negative setting and leave a set one, and ?wait= is capped at 25 s.
func TestConfigDefaults(t *testing.T) {
	const mib5 = 5 << 20
	for _, tc := range []struct {
		name string
		in   httpapi.Config
		want httpapi.Config
	}{
		{"zero", httpapi.Config{}, httpapi.Config{MaxBodyBytes: mib5, MaxViewBytes: mib5, MaxWait: 25 * time.Second, IdempotencyTTL: 24 * time.Hour}},
		{"negative", httpapi.Config{MaxBodyBytes: -1, MaxViewBytes: -1, MaxWait: -1, IdempotencyTTL: -1},
			httpapi.Config{MaxBodyBytes: mib5, MaxViewBytes: mib5, MaxWait: 25 * time.Second, IdempotencyTTL: 24 * time.Hour}},
		{"set", httpapi.Config{MaxBodyBytes: 1, MaxViewBytes: 2, MaxWait: time.Second, IdempotencyTTL: time.Hour},
			httpapi.Config{MaxBodyBytes: 1, MaxViewBytes: 2, MaxWait: time.Second, IdempotencyTTL: time.Hour}},
		{"the longest wait", httpapi.Config{MaxWait: 25 * time.Second}, httpapi.Config{MaxBodyBytes: mib5, MaxViewBytes: mib5, MaxWait: 25 * time.Second, IdempotencyTTL: 24 * time.Hour}},
		{"a longer wait", httpapi.Config{MaxWait: 26 * time.Second}, httpapi.Config{MaxBodyBytes: mib5, MaxViewBytes: mib5, MaxWait: 25 * time.Second, IdempotencyTTL: 24 * time.Hour}},
	} {
		a := httpapi.New(nil, nil, nil, nil, nil, tc.in)
		got := a.Config
		if got.MaxBodyBytes != tc.want.MaxBodyBytes || got.MaxViewBytes != tc.want.MaxViewBytes || got.MaxWait != tc.want.MaxWait || got.IdempotencyTTL != tc.want.IdempotencyTTL {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
		if a.Log == nil {
			t.Errorf("%s: no logger", tc.name)
		}
	}
}
