package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/features"
)

func main() {
	a := app.MustBuild(context.Background(), true, features.All)
	lambda.Start(a.Worker.Handle)
}
