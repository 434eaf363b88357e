// Package cost prices Baton runs: the model price table (per provider
// and model, per million input, output, cache-read and cache-write
// tokens; operator-overridable with a JSON file named by BATON_PRICES),
// the AWS list prices of the deployment's region, and the AWS SDK
// middleware that counts the requests a step makes (DynamoDB request
// units from the consumed capacity the service reports, SQS requests)
// into the core.Meter of the call's context. The step benchmark
// (scripts/bench) prices its counted requests with the same prices and
// the same DynamoDB item-size rules.
package cost
