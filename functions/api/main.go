// Command api is the API Lambda: API Gateway REST proxy events in, run
// views and errors out (DESIGN.md §2).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/baton-agents/baton/internal/app"
)

func main() {
	a := app.MustBuild(context.Background(), false)
	lambda.Start(a.API.Handle)
}
