package toolspec

import (
	"fmt"
	"strings"
)

// TenantPlaceholder in a secret reference stands for the run's tenant:
// "/baton/{tenant}/crm-token" names one parameter per tenant.
const TenantPlaceholder = "{tenant}"

// SecretRef references one secret: exactly one of Env (an environment
// variable), SSM (a SecureString parameter, decrypted) and ARN (a Secrets
// Manager secret). Each may contain {tenant}, resolved per tenant.
type SecretRef struct {
	Env string `json:"secret_env,omitempty"`
	SSM string `json:"secret_ssm,omitempty"`
	ARN string `json:"secret_arn,omitempty"`
}

// Validate checks that exactly one source is set.
func (r SecretRef) Validate() error {
	var set []string
	for _, s := range []struct{ name, v string }{{"secret_env", r.Env}, {"secret_ssm", r.SSM}, {"secret_arn", r.ARN}} {
		if s.v != "" {
			set = append(set, s.name)
		}
	}
	switch len(set) {
	case 0:
		return fmt.Errorf("set one of secret_env, secret_ssm and secret_arn")
	case 1:
		return r.checkARNTenant()
	}
	return fmt.Errorf("set only one of secret_env, secret_ssm and secret_arn (got %s)", strings.Join(set, ", "))
}

// checkARNTenant refuses a per-tenant Secrets Manager reference that one
// tenant's name could stretch into another's: Secrets Manager takes a name
// followed by "-" and six characters as that secret's ARN suffix, so with
// "baton/crm-{tenant}" a tenant named "acme-AbC123" would read acme's
// secret. A "/" after the last {tenant} cannot be matched by a tenant name
// (which holds none) nor by the suffix, so no two tenants' names meet.
func (r SecretRef) checkARNTenant() error {
	i := strings.LastIndex(r.ARN, TenantPlaceholder)
	if i < 0 || strings.Contains(r.ARN[i+len(TenantPlaceholder):], "/") {
		return nil
	}
	return fmt.Errorf("secret_arn %q: put a path after {tenant} (like baton/{tenant}/crm): Secrets Manager matches a name followed by - and six characters, so a tenant named \"acme-AbC123\" could reach tenant acme's secret", r.ARN)
}

// Source names the reference's source field (secret_env, secret_ssm or
// secret_arn; the first set), "" when none is.
func (r SecretRef) Source() string {
	switch {
	case r.Env != "":
		return "secret_env"
	case r.SSM != "":
		return "secret_ssm"
	case r.ARN != "":
		return "secret_arn"
	}
	return ""
}

// PerTenant reports whether the reference contains {tenant}.
func (r SecretRef) PerTenant() bool {
	return strings.Contains(r.Env+r.SSM+r.ARN, TenantPlaceholder)
}
