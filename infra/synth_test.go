package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestSynthesizedTemplate checks the template the pinned CDK CLI wrote
// (make infra-test runs cdk synth and then this test with BATON_SYNTH_DIR
// set to its cdk.out).
func TestSynthesizedTemplate(t *testing.T) {
	dir := os.Getenv("BATON_SYNTH_DIR")
	if dir == "" {
		t.Skip("BATON_SYNTH_DIR is not set; run make infra-test")
	}
	b, err := os.ReadFile(filepath.Join(dir, "Baton-dev.template.json"))
	if err != nil {
		t.Fatalf("the CDK CLI wrote no template: %v", err)
	}
	var raw template
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	checkQueueRules(t, raw)
	checkNag(t, runNag(t, filepath.Join(dir, "Baton-dev.template.json")))
	checkRoutes(t, raw, false)
	checkIntake(t, raw)
	if n := len(ofType(raw, "AWS::Lambda::Function")); n != 4 {
		t.Errorf("%d functions in the synthesized template", n)
	}
	for _, m := range ofType(raw, "AWS::Lambda::EventSourceMapping") {
		if rt, _ := m["FunctionResponseTypes"].([]any); len(rt) != 1 || rt[0] != "ReportBatchItemFailures" {
			t.Errorf("event source mapping %v", m)
		}
	}
}
