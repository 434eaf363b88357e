// Command sweeper is the scheduler Lambda, invoked every minute by an
// EventBridge schedule: it expires pending client-tool requests and
// approvals whose time has come and sends again the steps of stalled runs.
//
// It is app.MustBuild (configuration from the environment, no tool
// execution) and lambda.Start with one sweep per invocation.
package main
