package secrets

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/baton-agents/baton/core"
)

type fakeSSM struct{ calls []string }

func (f *fakeSSM) GetParameter(_ context.Context, name string) (string, error) {
	f.calls = append(f.calls, name)
	switch name {
	case "/ok":
		return "ssm-value", nil
	case "/empty":
		return "", nil
	}
	return "", errors.New("ParameterNotFound")
}

type fakeSM struct{ calls int }

func (f *fakeSM) GetSecretValue(_ context.Context, id string) (*string, []byte, error) {
	f.calls++
	switch id {
	case "arn:string":
		s := "sm-string"
		return &s, nil, nil
	case "arn:binary":
		return nil, []byte("sm-binary"), nil
	case "arn:empty":
		return nil, nil, nil
	}
	return nil, nil, errors.New("ResourceNotFoundException")
}

func TestResolver(t *testing.T) {
	ssmc, sm := &fakeSSM{}, &fakeSM{}
	envReads := 0
	r := New(Options{SSM: ssmc, SecretsManager: sm, Getenv: func(k string) string {
		envReads++
		if k == "SET" {
			return "env-value"
		}
		return ""
	}})
	ctx := context.Background()
	for _, c := range []struct {
		name       string
		get        func() ([]byte, error)
		want, fail string
	}{
		{"env", func() ([]byte, error) { return r.Env("SET") }, "env-value", ""},
		{"env unset", func() ([]byte, error) { return r.Env("UNSET") }, "", "environment variable UNSET is unset or empty"},
		{"ssm", func() ([]byte, error) { return r.Parameter(ctx, "/ok") }, "ssm-value", ""},
		{"ssm empty", func() ([]byte, error) { return r.Parameter(ctx, "/empty") }, "", "SSM parameter /empty is empty"},
		{"ssm missing", func() ([]byte, error) { return r.Parameter(ctx, "/missing") }, "", "read SSM parameter /missing: ParameterNotFound"},
		{"secret string", func() ([]byte, error) { return r.Secret(ctx, "arn:string") }, "sm-string", ""},
		{"secret binary", func() ([]byte, error) { return r.Secret(ctx, "arn:binary") }, "sm-binary", ""},
		{"secret empty", func() ([]byte, error) { return r.Secret(ctx, "arn:empty") }, "", "secret arn:empty is empty"},
		{"secret missing", func() ([]byte, error) { return r.Secret(ctx, "arn:missing") }, "", "read secret arn:missing"},
	} {
		v, err := c.get()
		if c.fail != "" {
			if err == nil || !strings.Contains(err.Error(), c.fail) {
				t.Errorf("%s: err = %v, want %q", c.name, err, c.fail)
			}
			if err != nil && strings.Contains(err.Error(), "-value") {
				t.Errorf("%s: error shows a value: %v", c.name, err)
			}
			continue
		}
		if err != nil || string(v) != c.want {
			t.Errorf("%s: %q %v, want %q", c.name, v, err, c.want)
		}
	}
	if _, err := r.SecretString(ctx, "arn:binary"); err == nil || !strings.Contains(err.Error(), "has no string value") {
		t.Errorf("binary secret as a string: %v", err)
	}
	// Each reference is read once.
	n, m := len(ssmc.calls), sm.calls
	_, _ = r.Env("SET")
	_, _ = r.Parameter(ctx, "/ok")
	_, _ = r.Secret(ctx, "arn:string")
	if len(ssmc.calls) != n || sm.calls != m || envReads != 2 {
		t.Errorf("read again: SSM %d→%d, Secrets Manager %d→%d, env %d", n, len(ssmc.calls), m, sm.calls, envReads)
	}
}

func TestResolverWithoutAWS(t *testing.T) {
	r := New(Options{})
	if _, err := r.Parameter(context.Background(), "/p"); err == nil || !strings.Contains(err.Error(), "AWS configuration is not available") {
		t.Errorf("SSM without AWS: %v", err)
	}
	if _, err := r.Secret(context.Background(), "arn:s"); err == nil || !strings.Contains(err.Error(), "AWS configuration is not available") {
		t.Errorf("Secrets Manager without AWS: %v", err)
	}
}

// A {tenant} reference resolves per tenant, each tenant's value read once
// and cached; a tenant that could reach another's secret is refused.
func TestResolvePerTenant(t *testing.T) {
	reads := map[string]int{}
	r := New(Options{Getenv: func(k string) string {
		reads[k]++
		return map[string]string{"CRM_acme": "tok-acme", "CRM_globex": "tok-globex", "PLAIN": "shared"}[k]
	}})
	ctx := context.Background()
	ref := Ref{Env: "CRM_{tenant}"}
	if !ref.PerTenant() || (Ref{Env: "PLAIN"}).PerTenant() {
		t.Fatal("PerTenant")
	}
	for i := 0; i < 2; i++ {
		for tenant, want := range map[string]string{"acme": "tok-acme", "globex": "tok-globex"} {
			v, err := r.Resolve(ctx, ref, tenant)
			if err != nil || string(v) != want {
				t.Fatalf("%s: %q %v", tenant, v, err)
			}
		}
	}
	if reads["CRM_acme"] != 1 || reads["CRM_globex"] != 1 {
		t.Fatalf("reads %v, want each tenant's once", reads)
	}
	if v, err := r.Resolve(ctx, Ref{Env: "PLAIN"}, ""); err != nil || string(v) != "shared" {
		t.Fatalf("plain: %q %v", v, err)
	}
	for _, bad := range []string{"", "../acme", "a/b", "a b"} {
		if _, err := r.Resolve(ctx, Ref{SSM: "/baton/{tenant}/crm"}, bad); err == nil {
			t.Errorf("tenant %q accepted", bad)
		}
	}
	if _, err := r.Resolve(ctx, Ref{}, "acme"); err == nil {
		t.Error("an empty reference resolved")
	}
	if err := (Ref{Env: "A", SSM: "/b"}).Validate(); err == nil || !strings.Contains(err.Error(), "only one") {
		t.Errorf("two sources: %v", err)
	}
}

// TestSecretsManagerReferencesCannotAlias: a per-tenant Secrets Manager
// reference whose {tenant} ends the name is refused (tenant "acme-AbC123"
// would read acme's secret "baton/crm-acme", full name
// "baton/crm-acme-AbC123"); with a path after {tenant} no tenant name can
// reach another's, which the resolver shows with a fake Secrets Manager
// that matches suffixes as the real one does.
func TestSecretsManagerReferencesCannotAlias(t *testing.T) {
	for _, ref := range []string{"baton/crm-{tenant}", "baton/{tenant}", "arn:aws:secretsmanager:us-east-1:123456789012:secret:crm-{tenant}", "baton/{tenant}/x-{tenant}"} {
		err := (Ref{ARN: ref}).Validate()
		if err == nil || !strings.Contains(err.Error(), "put a path after {tenant}") {
			t.Errorf("%s: %v", ref, err)
		}
	}
	for _, ref := range []string{"baton/{tenant}/crm", "arn:aws:secretsmanager:us-east-1:123456789012:secret:baton/{tenant}/crm", "baton/shared"} {
		if err := (Ref{ARN: ref}).Validate(); err != nil {
			t.Errorf("%s: %v", ref, err)
		}
	}
	// The tenants' names meet no other's secret, suffix or not.
	stored := map[string]string{"baton/acme/crm-AbC123": "acme's"}
	lookup := func(id string) (string, bool) {
		for name, v := range stored {
			if id == name || id+"-AbC123" == name || strings.HasSuffix(id, ":secret:"+name) {
				return v, true
			}
		}
		return "", false
	}
	for _, tenant := range []string{"acme-AbC123", "acme", "acme/crm-AbC123"} {
		id := strings.ReplaceAll("baton/{tenant}/crm", TenantPlaceholder, tenant)
		v, found := lookup(id)
		switch {
		case tenant == "acme" && (!found || v != "acme's"):
			t.Errorf("acme cannot read its own secret")
		case tenant != "acme" && found && core.ValidTenant(tenant):
			t.Errorf("tenant %s reads acme's secret through %s", tenant, id)
		}
	}
	if core.ValidTenant("acme/crm-AbC123") {
		t.Error("a tenant name holds a /")
	}
}
