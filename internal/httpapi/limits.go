package httpapi

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/baton-agents/baton/core"
)

// rateLimit takes a token from the caller's bucket, then from its
// tenant's: a request over either limit is a 429 with Retry-After, and a
// caller refused by its own limit takes nothing from its tenant's. The
// buckets live in the store, so the limits hold across API instances; a
// store that fails is logged and the request let through (the stage
// throttling stays the outer guard).
func (a *API) rateLimit(ctx context.Context, r *request) (map[string]string, error) {
	if a.Limits == nil {
		return nil, nil
	}
	caller := r.tokenID
	if r.authSource != AuthBearerToken {
		caller = r.caller.Label // a JWT's subject, an IAM principal
	}
	now := a.Clock.Now()
	for _, b := range []struct {
		which, key string
		limit      core.RateLimit
	}{
		{"caller", "caller#" + r.tenant + "#" + r.authSource + "#" + caller, a.Config.CallerRate},
		{"tenant", "tenant#" + r.tenant, a.Config.TenantRate},
	} {
		if b.limit.Rate <= 0 {
			continue
		}
		wait, err := a.Limits.TakeToken(ctx, b.key, now, b.limit)
		if err != nil {
			a.Log.WarnContext(ctx, "rate limit unavailable; request let through", "limit", b.which, "tenant", r.tenant, "err", err)
			continue
		}
		if wait > 0 {
			secs := int(math.Ceil(wait.Seconds()))
			return map[string]string{"Retry-After": strconv.Itoa(secs)}, &apiError{Status: http.StatusTooManyRequests, Code: "rate_limited",
				Message: fmt.Sprintf("the %s is over its rate limit of %s requests a second (burst %d); retry in %d s", subject(b.which, r.tenant), strconv.FormatFloat(b.limit.Rate, 'g', -1, 64), max(b.limit.Burst, 1), secs),
				Details: map[string]any{"limit": b.which, "retry_after_seconds": secs}}
		}
	}
	return nil, nil
}

func subject(which, tenant string) string {
	if which == "tenant" {
		return "tenant " + tenant
	}
	return "caller"
}
