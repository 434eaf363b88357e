package local

import (
	"encoding/json"
	"net/http"
	"sync/atomic"
	"time"
)

// DevClock is baton dev's controllable clock (--clock-offset): the wall
// clock shifted by an offset, which POST /_dev/clock moves forward, so
// schedules can be tried (and tested) without waiting for their fire
// times. Everything of baton dev reads it: runs, expiries, leases and
// the scheduler.
type DevClock struct {
	offset atomic.Int64
}

// NewDevClock starts a clock offset from the wall clock.
func NewDevClock(offset time.Duration) *DevClock {
	c := &DevClock{}
	c.offset.Store(int64(offset))
	return c
}

// Now is the wall clock plus the offset, in UTC.
func (c *DevClock) Now() time.Time { return time.Now().UTC().Add(time.Duration(c.offset.Load())) }

// DevClockPath is the route that moves baton dev's clock.
const DevClockPath = "/_dev/clock"

// ServeHTTP answers GET (the clock's time and offset) and POST
// {"advance": "90s"} (move it forward; never back).
func (c *DevClock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch r.Method {
	case http.MethodGet:
	case http.MethodPost:
		var b struct {
			Advance string `json:"advance"`
		}
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1024))
		dec.DisallowUnknownFields()
		d, err := time.Duration(0), dec.Decode(&b)
		if err == nil {
			d, err = time.ParseDuration(b.Advance)
		}
		if err != nil || d <= 0 {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": "invalid_request", "message": `want {"advance": "<a positive Go duration, e.g. 90s>"}`}})
			return
		}
		c.offset.Add(int64(d))
	default:
		w.Header().Set("Allow", "GET, POST")
		w.WriteHeader(http.StatusMethodNotAllowed)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": "method_not_allowed", "message": "use GET or POST"}})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"now": c.Now(), "offset": time.Duration(c.offset.Load()).String()})
}
