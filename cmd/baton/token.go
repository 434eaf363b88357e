package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/awsenv"
	"github.com/baton-agents/baton/internal/dynamostore"
	"github.com/baton-agents/baton/internal/httpapi"
)

// runToken stores an API token's hash in a deployment's table:
//
//	baton token put --table T --tenant acme [--token SECRET] [--scopes a,b] [--label L] [--dynamodb-endpoint URL]
//
// Without --token a random token is generated. The token itself is printed
// once and never stored.
func runToken(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "put" {
		return fmt.Errorf("usage: baton token put --table TABLE --tenant TENANT [--token T] [--scopes s1,s2] [--label L] [--dynamodb-endpoint URL] [--region R]")
	}
	fs := flag.NewFlagSet("token put", flag.ContinueOnError)
	fs.SetOutput(stderr)
	table := fs.String("table", "", "DynamoDB table of the deployment (stack output TableName)")
	tenant := fs.String("tenant", "", "tenant the token acts for")
	token := fs.String("token", "", "token to store (default: a new random one)")
	scopes := fs.String("scopes", strings.Join(httpapi.AllScopes, ","), "comma-separated scopes")
	label := fs.String("label", "", "label recorded as the principal's actor id")
	endpoint := fs.String("dynamodb-endpoint", firstEnv("AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL"), "DynamoDB endpoint (LocalStack, DynamoDB Local)")
	region := fs.String("region", firstEnv("AWS_REGION", "AWS_DEFAULT_REGION"), "AWS region")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *table == "" || *tenant == "" {
		return fmt.Errorf("--table and --tenant are required")
	}
	valid := map[string]bool{}
	for _, s := range httpapi.AllScopes {
		valid[s] = true
	}
	var sc []string
	for _, s := range strings.Split(*scopes, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !valid[s] {
			return fmt.Errorf("unknown scope %q (want %s)", s, strings.Join(httpapi.AllScopes, ", "))
		}
		sc = append(sc, s)
	}
	if *token == "" {
		*token = core.RandomIDs{}.NewID("btn")
	}
	if len(*token) < 16 {
		return fmt.Errorf("--token must be at least 16 characters")
	}
	c, err := awsenv.New(ctx, awsenv.Options{Region: *region, DynamoDBEndpoint: *endpoint})
	if err != nil {
		return err
	}
	lbl := *label
	if lbl == "" {
		lbl = *tenant
	}
	if err := dynamostore.New(c.DynamoDB, *table).PutToken(ctx, httpapi.HashToken(*token), core.Token{Tenant: *tenant, Scopes: sc, Label: lbl}); err != nil {
		return fmt.Errorf("store token: %w", err)
	}
	fmt.Fprintln(stdout, *token)
	return nil
}
