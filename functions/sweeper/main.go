package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/baton-agents/baton/internal/app"
)

func main() {
	a := app.MustBuild(context.Background(), false, app.Features{})
	lambda.Start(func(ctx context.Context) (map[string]int, error) {
		n, err := a.Sweep(ctx, 500)
		return map[string]int{"runs_checked": n}, err
	})
}
