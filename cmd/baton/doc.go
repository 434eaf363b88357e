// Command baton is Baton's command-line tool.
//
//	baton dev        run the API, the worker and the sweeper on one machine
//	baton invoke     run one function's handler on a sample event
//	baton token put  store an API token's hash in a deployment's table
//	baton demo       run a scripted agent in process and print its result envelope
//
// Every command fills in an app.Config and goes through internal/app, the
// one composition root; this package imports no other module package.
package main
