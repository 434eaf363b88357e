// Package tests holds Baton's end-to-end tests (build tag e2e). They build
// the baton binary, start `baton dev` — on DynamoDB Local and fauxqs when
// BATON_TEST_DYNAMODB_ENDPOINT and BATON_TEST_SQS_ENDPOINT are set, on its
// embedded stores otherwise — and drive the public HTTP API.
package tests
