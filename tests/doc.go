// Package tests holds Baton's end-to-end tests (build tag e2e). They build
// the baton binary, start `baton dev` — on DynamoDB Local and fauxqs when
// BATON_TEST_DYNAMODB_ENDPOINT and BATON_TEST_SQS_ENDPOINT are set, on its
// embedded stores otherwise — and drive the public HTTP API. One file is
// untagged and needs no emulator: conformance_test.go walks one scripted
// run through the in-process runner and the distributed runtime (on the
// embedded stores) and checks the §13.1 event vocabulary on both.
package tests
