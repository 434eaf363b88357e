package durable

import (
	"encoding/json"
	"io"
	"sort"
	"sync"
	"time"
)

// MetricsNamespace is the CloudWatch namespace of Baton's metrics.
const MetricsNamespace = "Baton"

// EMF writes CloudWatch Embedded Metric Format lines (one JSON object
// per line, no API call: CloudWatch Logs extracts the metrics from the
// Lambda's log stream). The runner writes:
//
//	Steps (Count) and StepDuration (Milliseconds) by StepKind, Outcome
//	  (ok, retry, stale: a stale or duplicate delivery dropped)
//	ModelLatency (Milliseconds), InputTokens and OutputTokens (Count) by Provider
//	ToolErrors (Count) by ErrorType; InDoubt (Count) for in_doubt results
//	LockConflicts (Count): commits refused by the run's version
//	RunsFinished (Count) by Status
type EMF struct {
	mu sync.Mutex
	w  io.Writer
}

// NewEMF writes EMF lines to w.
func NewEMF(w io.Writer) *EMF { return &EMF{w: w} }

type emfMetric struct {
	Name string `json:"Name"`
	Unit string `json:"Unit"`
}

// put writes one line: the values (name → value, unit) under dims.
func (m *EMF) put(at time.Time, dims map[string]string, units map[string]string, values map[string]float64) {
	if m == nil {
		return
	}
	keys := make([]string, 0, len(dims))
	for k := range dims {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	names := make([]string, 0, len(values))
	for k := range values {
		names = append(names, k)
	}
	sort.Strings(names)
	metrics := make([]emfMetric, len(names))
	for i, n := range names {
		metrics[i] = emfMetric{Name: n, Unit: units[n]}
	}
	line := map[string]any{"_aws": map[string]any{"Timestamp": at.UnixMilli(), "CloudWatchMetrics": []any{
		map[string]any{"Namespace": MetricsNamespace, "Dimensions": [][]string{keys}, "Metrics": metrics}}}}
	for k, v := range dims {
		line[k] = v
	}
	for k, v := range values {
		line[k] = v
	}
	b, err := json.Marshal(line)
	if err != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, _ = m.w.Write(append(b, '\n'))
}

const (
	unitCount = "Count"
	unitMs    = "Milliseconds"
)

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (e *Runner) countMetric(name string, dims map[string]string) {
	e.Metrics.put(e.Clock.Now(), dims, map[string]string{name: unitCount}, map[string]float64{name: 1})
}
