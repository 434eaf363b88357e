//go:build e2e

package tests

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestConsoleForkInBrowser drives forks in the console in headless
// Chromium (tests/console/fork.mjs) at 1,280 × 800: "Fork from here" on
// the run's user and assistant messages only, its form starting a fork
// with an edited message, the fork's page with its lineage and its
// reused tool call marked replayed, the source's page listing the fork,
// a replay fork's unrecorded call shown as not_recorded, every new
// button's label at 4.5:1 or more, no sideways scroll, no CSP violation;
// the screenshots go to tests/console/artifacts.
func TestConsoleForkInBrowser(t *testing.T) {
	browser := chromiumPath(t)
	node := consoleNode(t)
	d := startDev(t, devArgs(t))
	artifacts, _ := filepath.Abs("console/artifacts")
	var out struct{ Passed []string }
	runNodeWith(t, node, "console/fork.mjs", map[string]any{"base": d.base, "token": tokAcme, "chromium": browser, "artifacts": artifacts}, &out)
	if len(out.Passed) != 6 {
		t.Fatalf("passed %v", out.Passed)
	}
	t.Logf("forks in Chromium: %s; screenshots in %s", strings.Join(out.Passed, ", "), artifacts)
}
