package main

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// LimitsProps are the per-tenant limits (docs/limits.md): token buckets of
// API requests per tenant and per caller, checked by the API function
// with their state in the table, and a cap on each tenant's unfinished
// runs, kept by every function that commits runs. The stage throttling
// (ThrottleRate, ThrottleBurst) stays the outer guard. Empty or zero: no
// limit.
type LimitsProps struct {
	// TenantRate is requests a second ("5", "5/s", "300/m"), with
	// TenantBurst (default: the rate rounded up); the API function's
	// BATON_TENANT_RATE and BATON_TENANT_BURST.
	TenantRate, TenantBurst string
	// CallerRate and CallerBurst are each caller's bucket (a token, a JWT
	// subject): BATON_CALLER_RATE and BATON_CALLER_BURST.
	CallerRate, CallerBurst string
	// MaxActiveRuns caps each tenant's unfinished runs: every function's
	// BATON_TENANT_MAX_ACTIVE.
	MaxActiveRuns int
}

var (
	rateForm  = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(/(s|sec|m|min|h))?$`)
	burstForm = regexp.MustCompile(`^[1-9][0-9]*$`)
)

func (l LimitsProps) validate() error {
	for _, v := range []struct{ name, value string }{{"tenantRate", l.TenantRate}, {"callerRate", l.CallerRate}} {
		if v.value != "" && !rateForm.MatchString(v.value) {
			return fmt.Errorf("%s: want requests a second (5, 5/s, 300/m), got %q", v.name, v.value)
		}
	}
	for _, v := range []struct{ name, value string }{{"tenantBurst", l.TenantBurst}, {"callerBurst", l.CallerBurst}} {
		if v.value != "" && !burstForm.MatchString(v.value) {
			return fmt.Errorf("%s: want a whole number of requests, 1 or more, got %q", v.name, v.value)
		}
	}
	if l.MaxActiveRuns < 0 {
		return fmt.Errorf("tenantMaxActive: want a whole number of runs, got %d", l.MaxActiveRuns)
	}
	return nil
}

// addEnv puts the active-run cap into every function's environment
// (each may finish a run).
func (l LimitsProps) addEnv(all map[string]*string) {
	if l.MaxActiveRuns > 0 {
		all["BATON_TENANT_MAX_ACTIVE"] = jsii.String(strconv.Itoa(l.MaxActiveRuns))
	}
}

// addAPIEnv gives the API function the rate limits, which only it checks.
func (l LimitsProps) addAPIEnv(api awslambda.Function) {
	for k, v := range map[string]string{"BATON_TENANT_RATE": l.TenantRate, "BATON_TENANT_BURST": l.TenantBurst,
		"BATON_CALLER_RATE": l.CallerRate, "BATON_CALLER_BURST": l.CallerBurst} {
		if v != "" {
			api.AddEnvironment(jsii.String(k), jsii.String(v), nil)
		}
	}
}
