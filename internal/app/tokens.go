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
// default to all of them.
type Token struct {
	Token, Tenant, Label string
	Scopes               []string
}

// Scopes lists every API scope.
func Scopes() []string { return append([]string(nil), httpapi.AllScopes...) }

// NewToken returns a new random token with prefix.
func NewToken(prefix string) string { return core.RandomIDs{}.NewID(prefix) }

// PutToken stores t's hash in the app's token store.
func (a *App) PutToken(ctx context.Context, t Token) error {
	return putToken(ctx, a.Tokens, t)
}

// PutToken stores t's hash in the DynamoDB table of cfg.Stores, without
// building the rest of an app (baton token put).
func PutToken(ctx context.Context, cfg Config, t Token) error {
	if err := t.check(); err != nil {
		return err
	}
	ac, err := awsenv.Lazy(awsenv.Options{Region: cfg.Region, DynamoDBEndpoint: cfg.Stores.DynamoDBEndpoint})(ctx)
	if err != nil {
		return err
	}
	return putToken(ctx, dynamostore.New(awsenv.DynamoDB(ac, cfg.Stores.DynamoDBEndpoint), cfg.Stores.Table), t)
}

func putToken(ctx context.Context, store core.TokenStore, t Token) error {
	if err := t.check(); err != nil {
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

// check rejects unknown scopes.
func (t Token) check() error {
	valid := map[string]bool{}
	for _, s := range httpapi.AllScopes {
		valid[s] = true
	}
	for _, s := range t.Scopes {
		if !valid[s] {
			return fmt.Errorf("unknown scope %q (want %s)", s, strings.Join(httpapi.AllScopes, ", "))
		}
	}
	return nil
}
