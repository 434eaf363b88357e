package events

import "embed"

// Schemas holds the JSON Schemas of schemas/: the API's bodies, its
// events and the agents file (agents-file.schema.json).
//
//go:embed schemas/*.schema.json
var Schemas embed.FS

// OpenAPI is the OpenAPI 3.1 document of the public API, served at GET
// /v1/openapi.json; its component schemas are the files of schemas/
// (openapi_test.go keeps them equal).
//
//go:embed openapi.json
var OpenAPI []byte
