package secrets

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/awsenv"
	"github.com/baton-agents/baton/internal/toolspec"
)

// SSMAPI reads SSM parameters; awsenv.SSM's client implements it.
type SSMAPI interface {
	// GetParameter returns the decrypted value of parameter name.
	GetParameter(ctx context.Context, name string) (string, error)
}

// SecretsManagerAPI reads Secrets Manager secrets; awsenv.SecretsManager's
// client implements it.
type SecretsManagerAPI interface {
	// GetSecretValue returns secret id's SecretString, or nil and its
	// SecretBinary.
	GetSecretValue(ctx context.Context, id string) (*string, []byte, error)
}

var (
	_ SSMAPI            = (*awsenv.SSMClient)(nil)
	_ SecretsManagerAPI = (*awsenv.SecretsManagerClient)(nil)
)

// Options configures a Resolver; every field is optional.
type Options struct {
	// Getenv reads environment variables; nil means os.Getenv.
	Getenv func(string) string
	// AWS loads the AWS configuration the SSM and Secrets Manager clients
	// are built from, when a reference first needs one; nil means AWS is
	// not available.
	AWS awsenv.Loader
	// SSM and SecretsManager replace the clients built from AWS (tests).
	SSM            SSMAPI
	SecretsManager SecretsManagerAPI
}

// Resolver reads secrets, each reference at most once. It is safe for
// concurrent use.
type Resolver struct {
	mu     sync.Mutex
	getenv func(string) string
	aws    awsenv.Loader
	ssm    SSMAPI
	sm     SecretsManagerAPI
	byRef  map[string]value
}

type value struct {
	b      []byte
	binary bool
}

// New returns a Resolver.
func New(o Options) *Resolver {
	r := &Resolver{getenv: o.Getenv, aws: awsenv.Once(o.AWS), ssm: o.SSM, sm: o.SecretsManager, byRef: map[string]value{}}
	if r.getenv == nil {
		r.getenv = os.Getenv
	}
	return r
}

// Env returns the value of the environment variable name; unset or empty
// is an error.
func (r *Resolver) Env(name string) ([]byte, error) {
	v, err := r.cached("env:"+name, func() (value, error) {
		v := r.getenv(name)
		if v == "" {
			return value{}, fmt.Errorf("environment variable %s is unset or empty", name)
		}
		return value{b: []byte(v)}, nil
	})
	return v.b, err
}

// Parameter returns the decrypted value of the SSM parameter name; an
// empty parameter is an error.
func (r *Resolver) Parameter(ctx context.Context, name string) ([]byte, error) {
	v, err := r.cached("ssm:"+name, func() (value, error) {
		if r.ssm == nil {
			cfg, err := r.aws(ctx)
			if err != nil {
				return value{}, fmt.Errorf("SSM parameter %s: %w", name, err)
			}
			r.ssm = awsenv.SSM(cfg)
		}
		p, err := r.ssm.GetParameter(ctx, name)
		if err != nil {
			return value{}, fmt.Errorf("read SSM parameter %s: %w", name, err)
		}
		v := []byte(p)
		if len(v) == 0 {
			return value{}, fmt.Errorf("SSM parameter %s is empty", name)
		}
		return value{b: v}, nil
	})
	return v.b, err
}

// Secret returns the Secrets Manager secret id: its SecretString, or its
// SecretBinary. An empty secret is an error.
func (r *Resolver) Secret(ctx context.Context, id string) ([]byte, error) {
	v, err := r.secret(ctx, id)
	return v.b, err
}

// SecretString is Secret for a secret that must hold a SecretString.
func (r *Resolver) SecretString(ctx context.Context, id string) (string, error) {
	v, err := r.secret(ctx, id)
	if err == nil && v.binary {
		err = fmt.Errorf("secret %s has no string value", id)
	}
	return string(v.b), err
}

func (r *Resolver) secret(ctx context.Context, id string) (value, error) {
	return r.cached("arn:"+id, func() (value, error) {
		if r.sm == nil {
			cfg, err := r.aws(ctx)
			if err != nil {
				return value{}, fmt.Errorf("secret %s: %w", id, err)
			}
			r.sm = awsenv.SecretsManager(cfg)
		}
		str, bin, err := r.sm.GetSecretValue(ctx, id)
		if err != nil {
			return value{}, fmt.Errorf("read secret %s: %w", id, err)
		}
		v := value{}
		if str != nil {
			v.b = []byte(*str)
		} else {
			v.b, v.binary = append([]byte(nil), bin...), true
		}
		if len(v.b) == 0 {
			return value{}, fmt.Errorf("secret %s is empty", id)
		}
		return v, nil
	})
}

// cached returns the value of key, reading it with read the first time.
// Failures are not cached.
func (r *Resolver) cached(key string, read func() (value, error)) (value, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.byRef[key]; ok {
		return v, nil
	}
	v, err := read()
	if err != nil {
		return value{}, err
	}
	r.byRef[key] = v
	return v, nil
}

// TenantPlaceholder in a secret reference stands for the run's tenant
// (toolspec.TenantPlaceholder).
const TenantPlaceholder = toolspec.TenantPlaceholder

// Ref references one secret (toolspec.SecretRef, the agents file's
// declaration the resolver reads).
type Ref = toolspec.SecretRef

// Resolve reads the secret r references, {tenant} replaced by tenant.
// Each resolved reference is read once and cached, so a per-tenant
// reference is cached per tenant. A per-tenant reference needs a valid
// tenant name (core.ValidTenant).
func (res *Resolver) Resolve(ctx context.Context, r Ref, tenant string) ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if r.PerTenant() && !core.ValidTenant(tenant) {
		return nil, fmt.Errorf("a per-tenant secret needs the run's tenant (%s), got %q", core.TenantPattern, tenant)
	}
	sub := func(s string) string { return strings.ReplaceAll(s, TenantPlaceholder, tenant) }
	switch {
	case r.Env != "":
		return res.Env(sub(r.Env))
	case r.SSM != "":
		return res.Parameter(ctx, sub(r.SSM))
	}
	return res.Secret(ctx, sub(r.ARN))
}
