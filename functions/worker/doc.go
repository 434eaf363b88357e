// Command worker is the worker Lambda: SQS FIFO step batches in, one step
// per message, partial batch failures out.
//
// It is app.MustBuild (configuration from the environment, executing
// server tools) and lambda.Start with the worker handler.
package main
