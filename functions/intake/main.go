package main

import (
	"context"
	_ "time/tzdata" // schedules' time zones: Lambda has no zoneinfo

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/baton-agents/baton/internal/app"
)

func main() {
	a := app.MustBuild(context.Background(), false, app.Features{})
	lambda.Start(a.MustIntake().Handle)
}
