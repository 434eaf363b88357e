module github.com/baton-agents/baton

go 1.26

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2
	golang.org/x/text v0.14.0
)

toolchain go1.26.8
