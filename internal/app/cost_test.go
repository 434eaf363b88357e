package app

import "testing"

func TestMetricsAndPricingSettings(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	for _, tc := range []struct {
		vars map[string]string
		on   bool
	}{
		{nil, false},
		{map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "baton-worker"}, true},
		{map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "baton-worker", "BATON_METRICS": "none"}, false},
		{map[string]string{"BATON_METRICS": "emf"}, true},
	} {
		m, err := metrics(Config{Env: env(tc.vars)})
		if err != nil || (m != nil) != tc.on {
			t.Errorf("%v: metrics %v, %v", tc.vars, m, err)
		}
	}
	if _, err := metrics(Config{Env: env(map[string]string{"BATON_METRICS": "statsd"})}); err == nil {
		t.Error("an unknown BATON_METRICS was accepted")
	}
	if _, _, err := pricing(Config{Env: env(map[string]string{"BATON_PRICES": "/nonexistent/prices.json"})}); err == nil {
		t.Error("a missing prices file was accepted")
	}
	if _, m, err := pricing(Config{Env: env(map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "lots"})}); err == nil {
		t.Errorf("a bad memory size was accepted: %+v", m)
	}
	if _, m, err := pricing(Config{Env: env(map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "2048"})}); err != nil || m == nil || m.LambdaMemoryMB != 2048 {
		t.Errorf("metering %+v, %v", m, err)
	}
	if _, m, err := pricing(Config{Stores: Stores{Memory: true}, Env: env(nil)}); err != nil || m != nil {
		t.Errorf("the embedded stores are metered: %+v, %v", m, err)
	}
}
