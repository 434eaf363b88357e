package main

import (
	"context"
	"fmt"
	"os"
	_ "time/tzdata" // schedules' time zones: Lambda has no zoneinfo

	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/features/spans"
)

func main() {
	a := app.MustBuild(context.Background(), false, spans.Export)
	if err := a.StartAPI(); err != nil {
		fmt.Fprintln(os.Stderr, "baton:", err)
		os.Exit(1)
	}
}
