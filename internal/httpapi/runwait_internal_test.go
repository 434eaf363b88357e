package httpapi

import (
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// TestRunWaitIsCapped: a ?wait= long poll lasts the seconds asked for, at
// most the configured MaxWait (whose own cap TestConfigDefaults checks):
// the durations a poll is given, with no poll timed.
func TestRunWaitIsCapped(t *testing.T) {
	a := &API{Config: Config{MaxWait: 25 * time.Second}}
	for q, want := range map[string]time.Duration{"": 0, "0": 0, "3": 3 * time.Second, "25": 25 * time.Second, "26": 25 * time.Second, "3600": 25 * time.Second} {
		r := &request{APIGatewayProxyRequest: events.APIGatewayProxyRequest{QueryStringParameters: map[string]string{"wait": q}}}
		if got, err := a.runWait(r, "r-1"); err != nil || got != want {
			t.Errorf("?wait=%s: %v %v, want %v", q, got, err, want)
		}
	}
}
