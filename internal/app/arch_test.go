package app

import (
	"bytes"
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/baton-agents/baton"

// imports maps every package of the module (but infra, its own module) to
// the module packages its non-test files import, for the build tags of
// this platform plus lambda.norpc; the mains (cmd/, functions/) count
// their test files too.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx := build.Default
	ctx.BuildTags = append(ctx.BuildTags, "lambda.norpc")
	out := map[string][]string{}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if name := d.Name(); rel != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || rel == "infra") {
			return filepath.SkipDir
		}
		pkg, err := ctx.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		ip := module
		if rel != "." {
			ip += "/" + filepath.ToSlash(rel)
		}
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, module+"/") && testKit(imp) {
				t.Errorf("%s imports the test kit %s outside its tests", ip, imp)
			}
		}
		all := pkg.Imports
		if under(ip, "cmd", "functions") {
			all = append(append(append([]string(nil), all...), pkg.TestImports...), pkg.XTestImports...)
		}
		var own []string
		for _, imp := range all {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				own = append(own, imp)
			}
		}
		out[ip] = own
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// testKit reports whether pkg is one of the module's test kits (a
// package whose name ends in "test", such as storetest), which only
// tests import: checked below, since the mains' test files count.
func testKit(pkg string) bool { return strings.HasSuffix(pkg, "test") }

func under(pkg string, dirs ...string) bool {
	for _, d := range dirs {
		p := module + "/" + d
		if pkg == p || strings.HasPrefix(pkg, p+"/") {
			return true
		}
	}
	return false
}

// TestArchitecture guards the composition root and the direction of the
// dependencies: the mains wire through internal/app only (internal/sse,
// the reader of the public stream route, is a client's, not wiring); driven
// adapters never reach the driving side; core imports nothing of the
// module.
func TestArchitecture(t *testing.T) {
	all := imports(t)
	if len(all) < 20 {
		t.Fatalf("found only %d packages; is the module root right?", len(all))
	}
	var pkgs []string
	for p := range all {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	driven := []string{"internal/dynamostore", "internal/sqsqueue", "internal/memstore", "internal/providers", "internal/executors", "internal/secrets", "internal/awsenv", "internal/toolspec", "internal/hooks", "internal/guardrails", "internal/notify", "internal/mcptools", "internal/a2atool", "internal/schedules/eventbridge"}
	driving := []string{"internal/httpapi", "internal/worker", "internal/intake", "internal/runspec", "internal/durable", "internal/app", "internal/local", "internal/lambdastream", "cmd", "functions"}
	for _, p := range pkgs {
		for _, imp := range all[p] {
			switch {
			case under(p, "cmd", "functions") && imp != module+"/internal/app" && !under(imp, "internal/features") && imp != module+"/internal/sse" && !testKit(imp) &&
				(p != module+"/cmd/baton" || imp != module+"/internal/cli"):
				// internal/sse reads the public stream route: it is a
				// client's tool, not wiring; test kits serve the mains'
				// tests only; cmd/baton dispatches the client commands
				// to internal/cli.
				t.Errorf("%s imports %s: mains wire through internal/app and internal/features only (and read streams with internal/sse)", p, imp)
			case under(p, "internal/cli") && imp != module+"/internal/sse":
				// The CLI is a thin client of the public HTTP API.
				t.Errorf("%s imports %s: the CLI imports no server package (internal/sse only)", p, imp)
			case under(p, driven...) && under(imp, driving...):
				t.Errorf("%s imports %s: a driven adapter must not import the driving side", p, imp)
			case under(p, "core"):
				t.Errorf("%s imports %s: core imports no module package", p, imp)
			case under(imp, "internal/guardrails/bedrock") && !under(p, "internal/features", "internal/guardrails/bedrock"):
				// The Bedrock Guardrails rule is a feature: it reaches a
				// function through app.Features only.
				t.Errorf("%s imports %s: Bedrock Guardrails reach a function through app.Features (internal/features) only", p, imp)
			case under(imp, "internal/schedules/eventbridge") && !under(p, "internal/features", "internal/schedules/eventbridge"):
				// The EventBridge Scheduler client is a feature: it
				// reaches the API through app.Features only.
				t.Errorf("%s imports %s: the EventBridge Scheduler client reaches a function through app.Features (internal/features) only", p, imp)
			case under(p, "internal/agents", "internal/toolspec") && imp != module+"/core" && imp != module+"/events" && !under(imp, "internal/agents", "internal/toolspec"):
				// The agents file parses into declarations; only the
				// composition root builds adapters from them.
				t.Errorf("%s imports %s: the agents file's declarations import no adapter (core, events and each other only)", p, imp)
			}
		}
	}
	// Each function links what it runs (app.Features): no model provider
	// SDK, Bedrock Guardrails or MCP client outside the worker, the A2A
	// client in the worker and the sweeper (which cancels remote tasks
	// runs gave up on), no span exporter in the sweeper or the intake
	// function, the EventBridge Scheduler client in the API alone (which
	// creates, updates and deletes schedules). TestFunctionsLinkedSDKs checks the same on the real import
	// graph, SDKs included.
	reach := func(from string) map[string]bool {
		seen := map[string]bool{}
		var walk func(string)
		walk = func(p string) {
			if seen[p] {
				return
			}
			seen[p] = true
			for _, imp := range all[p] {
				walk(imp)
			}
		}
		walk(module + "/" + from)
		return seen
	}
	for fn, banned := range map[string][]string{
		"functions/api":     {"internal/providers/setup", "internal/guardrails/bedrock", "internal/mcptools", "internal/a2atool"},
		"functions/sweeper": {"internal/providers/setup", "internal/guardrails/bedrock", "internal/mcptools", "internal/telemetry/otelsetup", "internal/schedules/eventbridge"},
		"functions/intake":  {"internal/providers/setup", "internal/guardrails/bedrock", "internal/mcptools", "internal/a2atool", "internal/telemetry/otelsetup", "internal/schedules/eventbridge"},
		"functions/worker":  {"internal/schedules/eventbridge"},
	} {
		deps := reach(fn)
		for _, b := range banned {
			if deps[module+"/"+b] {
				t.Errorf("%s links %s, which it never runs", fn, b)
			}
		}
	}
	if deps := reach("functions/worker"); !deps[module+"/internal/providers/setup"] || !deps[module+"/internal/guardrails/bedrock"] || !deps[module+"/internal/mcptools"] || !deps[module+"/internal/a2atool"] {
		t.Error("the worker does not link the model providers, Bedrock Guardrails, the MCP client and the A2A client")
	}
	if deps := reach("functions/api"); !deps[module+"/internal/schedules/eventbridge"] {
		t.Error("the API does not link the EventBridge Scheduler client, with which it keeps schedules")
	}
	if deps := reach("functions/sweeper"); !deps[module+"/internal/a2atool"] {
		t.Error("the sweeper does not link the A2A client, with which it cancels remote tasks")
	}
	for _, want := range []string{"cmd/baton", "functions/api", "functions/worker", "functions/intake", "internal/executors", "core"} {
		if _, ok := all[module+"/"+want]; !ok {
			t.Errorf("package %s not found", want)
		}
	}
}

// TestFunctionsLinkedSDKs checks the real import graph of each Lambda
// (go list, with the Makefile's Lambda build tags, for linux/arm64),
// third-party packages included: the Bedrock runtime client (the model
// provider and Bedrock Guardrails) is linked by the worker alone, which
// runs steps; the API, the sweeper and the intake function never call
// Bedrock. The EventBridge Scheduler client is the API's alone, which
// creates, updates and deletes schedules (they fire through the intake
// queue). No function links the generated SSM, Secrets Manager, Lambda
// or EventBridge clients, whose schema tables each start would
// initialise: secrets, lambda tools and hooks, and notifications go
// through awsenv.JSONClient. Each links the DynamoDB and SQS clients of
// its stores.
func TestFunctionsLinkedSDKs(t *testing.T) {
	const sdk = "github.com/aws/aws-sdk-go-v2/service/"
	deps := lambdaDeps(t)
	for _, fn := range []string{"functions/api", "functions/worker", "functions/sweeper", "functions/intake"} {
		banned := []string{sdk + "ssm", sdk + "secretsmanager", sdk + "lambda", sdk + "eventbridge"}
		if fn != "functions/worker" {
			banned = append(banned, sdk+"bedrockruntime")
		}
		if fn != "functions/api" {
			banned = append(banned, sdk+"scheduler")
		}
		for _, b := range banned {
			if deps[fn][b] {
				t.Errorf("%s links %s, which it never uses or calls without its generated client", fn, b)
			}
		}
		for _, want := range []string{sdk + "dynamodb", sdk + "sqs"} {
			if !deps[fn][want] {
				t.Errorf("%s does not link %s", fn, want)
			}
		}
	}
	if !deps["functions/worker"][sdk+"bedrockruntime"] {
		t.Errorf("the worker does not link %s", sdk+"bedrockruntime")
	}
	if !deps["functions/api"][sdk+"scheduler"] {
		t.Errorf("the API does not link %s", sdk+"scheduler")
	}
}

// lambdaDeps maps each function (functions/<name>) to the packages it
// links, as go list reports them for the Lambda build.
func lambdaDeps(t *testing.T) map[string]map[string]bool {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^LAMBDA_FLAGS\s*:=.*-tags '([^']+)'`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile's LAMBDA_FLAGS name no -tags")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command (go test puts it on PATH): %v", err)
	}
	cmd := exec.Command(goTool, "list", "-tags", string(m[1]), "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", "./functions/...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	deps := map[string]map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		fn := strings.TrimPrefix(f[0], module+"/")
		deps[fn] = map[string]bool{}
		for _, d := range f[1:] {
			deps[fn][d] = true
		}
	}
	for _, fn := range []string{"functions/api", "functions/worker", "functions/sweeper", "functions/intake"} {
		if len(deps[fn]) < 100 {
			t.Fatalf("go list found %d packages linked by %s", len(deps[fn]), fn)
		}
	}
	return deps
}

// TestCLIImportsStandardLibraryOnly: beside internal/sse, the CLI
// client imports the standard library only — no server package, no AWS
// SDK.
func TestCLIImportsStandardLibraryOnly(t *testing.T) {
	pkg, err := build.Default.ImportDir("../cli", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if imp == module+"/internal/sse" {
			continue
		}
		if first, _, _ := strings.Cut(imp, "/"); strings.Contains(first, ".") {
			t.Errorf("internal/cli imports %s: a client of the public API uses the standard library and internal/sse only", imp)
		}
	}
}
