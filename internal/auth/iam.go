package auth

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/baton-agents/baton/core"
)

// IAMPrincipal is what one IAM principal may do: its tenant and its
// Baton scopes (none listed: every scope).
type IAMPrincipal struct {
	Tenant string   `json:"tenant"`
	Scopes []string `json:"scopes,omitempty"`
}

// IAM maps the IAM principals API Gateway authenticated (AWS_IAM
// authorization, SigV4) to tenants. A role's entry also covers every
// session of the role (the assumed-role ARN API Gateway reports).
type IAM struct {
	byKey map[string]IAMPrincipal
	all   []string
}

var (
	iamUserOrRole = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^arn:(aws[a-z-]*):iam::([0-9]{12}):(user|role)/(?:[!-~]+/)?([\w+=,.@-]{1,128})$`)
	})
	assumedRole = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^arn:(aws[a-z-]*):sts::([0-9]{12}):assumed-role/([\w+=,.@-]{1,64})/[\w+=,.@-]{2,64}$`)
	})
)

// principalKey is the map key of a principal ARN: partition, account,
// kind and name, without an IAM path (an assumed-role ARN carries none)
// and, for an assumed role, without its session.
func principalKey(arn string) (string, bool) {
	if m := iamUserOrRole().FindStringSubmatch(arn); m != nil {
		return m[1] + ":" + m[2] + ":" + m[3] + "/" + m[4], true
	}
	if m := assumedRole().FindStringSubmatch(arn); m != nil {
		return m[1] + ":" + m[2] + ":role/" + m[3], true
	}
	return "", false
}

// ParseIAMPrincipals reads the mapping of principal ARNs to tenants and
// scopes (BATON_IAM_PRINCIPALS), a JSON object:
//
//	{"arn:aws:iam::123456789012:role/ingest": {"tenant": "acme", "scopes": ["runs:write", "runs:read"]}}
//
// Keys are IAM user or role ARNs; tenants follow core.TenantPattern;
// scopes must be among allScopes (none listed: all of them).
func ParseIAMPrincipals(s string, allScopes []string) (*IAM, error) {
	var raw map[string]IAMPrincipal
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("want a JSON object of principal ARNs to {\"tenant\": …, \"scopes\": […]}: %v", err)
	}
	iam := &IAM{byKey: map[string]IAMPrincipal{}, all: allScopes}
	for arn, p := range raw {
		if !iamUserOrRole().MatchString(arn) { // not an assumed role's session
			return nil, fmt.Errorf("%q: want an IAM role or user ARN (arn:aws:iam::ACCOUNT:role/NAME)", arn)
		}
		key, _ := principalKey(arn)
		if !core.ValidTenant(p.Tenant) {
			return nil, fmt.Errorf("%q: tenant %q: %s", arn, p.Tenant, "want "+core.TenantPattern)
		}
		for _, sc := range p.Scopes {
			if !slices.Contains(allScopes, sc) {
				return nil, fmt.Errorf("%q: unknown scope %q (want %s)", arn, sc, strings.Join(allScopes, ", "))
			}
		}
		if _, dup := iam.byKey[key]; dup {
			return nil, fmt.Errorf("%q: the principal is listed twice", arn)
		}
		iam.byKey[key] = p
	}
	return iam, nil
}

// Resolve maps the caller ARN API Gateway reports (a user, a role, or a
// role's session) to its identity; false when it is not mapped.
func (m *IAM) Resolve(callerARN, accessKey string) (Identity, bool) {
	key, ok := principalKey(callerARN)
	if !ok {
		return Identity{}, false
	}
	p, ok := m.byKey[key]
	if !ok {
		return Identity{}, false
	}
	scopes := p.Scopes
	if len(scopes) == 0 {
		scopes = m.all
	}
	return Identity{Tenant: p.Tenant, Subject: callerARN, Scopes: append([]string(nil), scopes...), TokenID: accessKey}, true
}
