// Command intake is the intake Lambda: batches of the intake queue (a
// standard SQS queue) in, one run started per message, partial batch
// failures out. A refused message is sent to the intake dead-letter queue
// (BATON_INTAKE_DLQ_URL) with its refusal in message attributes and
// reported done; a transient failure is reported as a batch item failure
// (see internal/intake).
//
// It is app.MustBuild (configuration from the environment, no server
// tools) and lambda.Start with the intake handler.
package main
