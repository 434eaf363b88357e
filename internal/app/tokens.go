package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/awsenv"
	"github.com/baton-agents/baton/internal/dynamostore"
	"github.com/baton-agents/baton/internal/httpapi"
)

// Token is an API token to store: only its hash is kept. Label is
// recorded as the principal's actor id (default the tenant); Scopes
// default to all the API scopes. Besides API scopes a token may hold any
// other scope (such as crm:write): the API ignores them, and they become
// the capability ceiling of the runs the token starts, where a server
// tool's "access" block may require them.
type Token struct {
	Token, Tenant, Label string
	Scopes               []string
}

// Scopes lists every API scope.
func Scopes() []string { return append([]string(nil), httpapi.AllScopes...) }

// DevScopes are the scopes of a baton dev token: the default API
// scopes and memories:subject (a local tester names any end user's
// memories, as a back office would), but not agents:manage, which a
// token is given by name.
func DevScopes() []string { return append(Scopes(), httpapi.ScopeMemoriesSubject) }

// NewToken returns a new random token with prefix.
func NewToken(prefix string) string { return core.RandomIDs{}.NewID(prefix) }

// PutToken stores t's hash in the app's token store.
func (a *App) PutToken(ctx context.Context, t Token) error {
	return putToken(ctx, a.Tokens, t)
}

// PutToken stores t's hash in the DynamoDB table of cfg.Stores, without
// building the rest of an app (baton token put).
func PutToken(ctx context.Context, cfg Config, t Token) error {
	if err := t.Check(); err != nil {
		return err
	}
	ac, err := awsenv.Lazy(awsenv.Options{Region: cfg.Region, DynamoDBEndpoint: cfg.Stores.DynamoDBEndpoint})(ctx)
	if err != nil {
		return err
	}
	return putToken(ctx, dynamostore.New(awsenv.DynamoDB(ac, cfg.Stores.DynamoDBEndpoint), cfg.Stores.Table), t)
}

func putToken(ctx context.Context, store core.TokenStore, t Token) error {
	if err := t.Check(); err != nil {
		return err
	}
	scopes := t.Scopes
	if scopes == nil {
		scopes = Scopes()
	}
	label := t.Label
	if label == "" {
		label = t.Tenant
	}
	if err := store.PutToken(ctx, httpapi.HashToken(t.Token), core.Token{Tenant: t.Tenant, Scopes: scopes, Label: label}); err != nil {
		return fmt.Errorf("store token: %w", err)
	}
	return nil
}

// Check rejects a scope that is not a valid scope name
// (core.ValidScope), and an unknown scope in the API's own namespaces
// (runs:, results:, approvals:, memories:, schedules:, …), which is more likely a typo than an
// extra scope.
func (t Token) Check() error {
	if !core.ValidTenant(t.Tenant) {
		return fmt.Errorf("tenant %q is not a valid tenant name (%s)", t.Tenant, core.TenantPattern)
	}
	api := map[string]bool{}
	reserved := map[string]bool{}
	for _, s := range httpapi.KnownScopes {
		api[s] = true
		ns, _, _ := strings.Cut(s, ":")
		reserved[ns] = true
	}
	for _, s := range t.Scopes {
		if !core.ValidScope(s) {
			return fmt.Errorf("scope %q is not a valid scope name (1 to 128 letters, digits and _ . : / -, like crm:write)", s)
		}
		if ns, _, _ := strings.Cut(s, ":"); reserved[ns] && !api[s] {
			return fmt.Errorf("unknown API scope %q (API scopes: %s)", s, strings.Join(httpapi.KnownScopes, ", "))
		}
	}
	return nil
}
