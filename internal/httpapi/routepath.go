package httpapi

import (
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// RoutePath is the API path a proxy request is routed on. Behind a custom
// domain with a base-path mapping, path carries the base path
// (/{base}/v1/runs) while the matched resource (/v1/runs or
// /v1/{proxy+}) and its path parameters do not, so the route is the
// resource with its path parameters put in. A request without a resource
// (a direct invocation) or whose resource names a parameter the request
// does not carry routes on its path.
func RoutePath(req events.APIGatewayProxyRequest) string {
	res := req.Resource
	if res == "" {
		return req.Path
	}
	var b strings.Builder
	for {
		open := strings.IndexByte(res, '{')
		if open < 0 {
			b.WriteString(res)
			return b.String()
		}
		end := strings.IndexByte(res[open:], '}')
		if end < 0 {
			return req.Path
		}
		name := strings.TrimSuffix(res[open+1:open+end], "+")
		v, ok := req.PathParameters[name]
		if !ok || v == "" {
			return req.Path
		}
		b.WriteString(res[:open])
		b.WriteString(v)
		res = res[open+end+1:]
	}
}
