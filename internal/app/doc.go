// Package app is Baton's one composition root: it builds a process from
// one Config (which stores: the embedded in-memory ones, or a DynamoDB
// table and an SQS FIFO queue, optionally on emulator endpoints and
// created on demand; the agent registry from a file, inline JSON or
// embedded bytes; the enabled model providers; the tunables; whether the
// process executes tools) plus Deps (an injected clock, ID source, Go tool
// handlers, model, logger, and wrappers of the store, the queue and the
// AWS clients). Build loads the AWS configuration once (internal/awsenv)
// and resolves every secret through one resolver (internal/secrets), then
// wires the stores, the providers, the tool executors, the durable runner
// and the API and worker handlers.
//
// The Lambdas call MustBuild, which reads ConfigFromEnv, and the API
// Lambda then App.StartAPI (the Runtime API loop of internal/lambdastream,
// which streams the stream route's responses); baton dev,
// baton invoke, baton token, the benchmark and the tests fill in a
// Config and call Build (or PutToken). App.Serve runs the whole system
// on one machine behind the driving adapters of internal/local. The
// mains under cmd/ and functions/ import no module package but this
// one; TestArchitecture checks it, and that driven adapters never import
// the driving side and core imports nothing of the module.
package app
