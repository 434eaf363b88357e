package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/baton-agents/baton/internal/app"
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
	var cfg app.Config
	fs := flag.NewFlagSet("token put", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.Stores.Table, "table", "", "DynamoDB table of the deployment (stack output TableName)")
	tenant := fs.String("tenant", "", "tenant the token acts for")
	token := fs.String("token", "", "token to store (default: a new random one)")
	scopes := fs.String("scopes", strings.Join(app.Scopes(), ","), "comma-separated scopes: API scopes, plus any extra ones (such as crm:write) that tools' access blocks require")
	label := fs.String("label", "", "label recorded as the principal's actor id")
	fs.StringVar(&cfg.Stores.DynamoDBEndpoint, "dynamodb-endpoint", firstEnv("AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL"), "DynamoDB endpoint (LocalStack, DynamoDB Local)")
	fs.StringVar(&cfg.Region, "region", firstEnv("AWS_REGION", "AWS_DEFAULT_REGION"), "AWS region")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if cfg.Stores.Table == "" || *tenant == "" {
		return fmt.Errorf("--table and --tenant are required")
	}
	if *token == "" {
		*token = app.NewToken("btn")
	}
	if len(*token) < 16 {
		return fmt.Errorf("--token must be at least 16 characters")
	}
	sc := []string{}
	sc = append(sc, app.List(*scopes)...)
	if err := app.PutToken(ctx, cfg, app.Token{Token: *token, Tenant: *tenant, Label: *label, Scopes: sc}); err != nil {
		return err
	}
	fmt.Fprintln(stdout, *token)
	return nil
}
