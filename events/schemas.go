package events

import "embed"

// Schemas holds the JSON Schemas of schemas/: the API's bodies, its
// events and the agents file (agents-file.schema.json).
//
//go:embed schemas/*.schema.json
var Schemas embed.FS
