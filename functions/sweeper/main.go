package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/features/remote"
)

func main() {
	a := app.MustBuild(context.Background(), false, remote.Cancel)
	lambda.Start(func(ctx context.Context) (map[string]int, error) {
		n, err := a.Sweep(ctx, 500)
		return map[string]int{"runs_checked": n}, err
	})
}
