// Command api is the API Lambda: API Gateway REST proxy events in, run
// views and errors out (DESIGN.md §2).
//
// It is app.MustBuild (configuration from the environment, no tool
// execution) and lambda.Start with the API handler.
package main
