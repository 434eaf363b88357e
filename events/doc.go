// Package events holds Baton's contracts as data: JSON Schemas for the
// API request bodies, the error body, the step message and lifecycle
// events (schemas/), and sample Lambda events — API Gateway proxy
// requests for every route (api/) and an SQS step batch (sqs/) — used by
// the tests and by `make invoke`. The Go files here are only tests that
// keep the samples, the schemas and the handlers in agreement.
package events
