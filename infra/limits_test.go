package main

import (
	"strings"
	"testing"
)

// TestLimitsOptions: the active-run cap reaches every function (each may
// finish a run), the rates only the API; malformed values are refused
// before synthesis.
func TestLimitsOptions(t *testing.T) {
	_, raw := synth(t, &StackProps{Stage: "dev", Limits: LimitsProps{TenantRate: "5/s", TenantBurst: "10", CallerRate: "2", MaxActiveRuns: 20}})
	env := apiEnv(t, raw)
	if env["BATON_TENANT_RATE"] != "5/s" || env["BATON_TENANT_BURST"] != "10" || env["BATON_CALLER_RATE"] != "2" || env["BATON_CALLER_BURST"] != nil {
		t.Fatalf("API env %v", env)
	}
	fns := 0
	for _, r := range raw.Resources {
		if r.Type != "AWS::Lambda::Function" {
			continue
		}
		e, _ := r.Properties["Environment"].(map[string]any)
		v, _ := e["Variables"].(map[string]any)
		if v["BATON_TABLE"] == nil {
			continue // not one of Baton's functions
		}
		fns++
		if v["BATON_TENANT_MAX_ACTIVE"] != "20" {
			t.Errorf("a function without the active-run cap: %v", v)
		}
		if _, api := v["BATON_STREAM_TRANSFER"]; !api && v["BATON_TENANT_RATE"] != nil {
			t.Errorf("a rate on a function other than the API")
		}
	}
	if fns < 4 {
		t.Fatalf("%d functions carry Baton's table", fns)
	}
	for _, tc := range []struct {
		l    LimitsProps
		want string
	}{
		{LimitsProps{TenantRate: "fast"}, "tenantRate"},
		{LimitsProps{CallerRate: "5/week"}, "callerRate"},
		{LimitsProps{TenantBurst: "0"}, "tenantBurst"},
		{LimitsProps{MaxActiveRuns: -1}, "tenantMaxActive"},
	} {
		p := &StackProps{Limits: tc.l}
		p.defaults()
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.l, err, tc.want)
		}
	}
}
