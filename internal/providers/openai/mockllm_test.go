package openai

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/providers/providertest"
)

// TestMockLLM streams from a real OpenAI-compatible server,
// @dwmkerr/mock-llm (npm install @dwmkerr/mock-llm@0.1.29), whose default
// rule answers with the last user message, sent in 50-character chunks
// every 50 ms. It runs only when BATON_MOCK_LLM names the package's
// dist/main.js and node is installed. mock-llm sends no usage and no
// tool calls, so the check is that the deltas join into the content and
// that the streamed reply is the buffered one but for the completion id
// (a timestamp). make test runs it through scripts/emulators.sh, which
// installs the pinned package and sets BATON_MOCK_LLM and BATON_NODE
// (its Node 22); once BATON_MOCK_LLM is set, a missing node fails.
func TestMockLLM(t *testing.T) {
	main := os.Getenv("BATON_MOCK_LLM")
	if main == "" {
		t.Skip("BATON_MOCK_LLM does not name @dwmkerr/mock-llm's dist/main.js (scripts/emulators.sh run sets it)")
	}
	node := os.Getenv("BATON_NODE")
	if node == "" {
		var err error
		if node, err = exec.LookPath("node"); err != nil {
			t.Fatalf("BATON_MOCK_LLM is set but no node: set BATON_NODE or put node on PATH (%v)", err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	_ = l.Close()
	cmd := exec.Command(node, main)
	cmd.Dir = t.TempDir() // no mock-llm.yaml: the default rules
	cmd.Env = append(os.Environ(), "HOST=127.0.0.1", "PORT="+port)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	// Ready once it says so; if it exits first, its output says why.
	sc := bufio.NewScanner(out)
	var log []string
	ready := false
	for !ready && sc.Scan() {
		log = append(log, sc.Text())
		ready = strings.Contains(sc.Text(), "server running")
	}
	if !ready {
		t.Fatalf("mock-llm did not start: %v\n%s", sc.Err(), strings.Join(log, "\n"))
	}
	go func() {
		for sc.Scan() {
		}
	}()

	p, err := New(Config{BaseURL: "http://127.0.0.1:" + port + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	req := providertest.Plain(core.ModelSpec{Provider: Name, Model: "gpt-4o-mini"})
	req.Messages[0].Content = strings.Repeat("Stream this sentence back to me in pieces, please. ", 3)
	var tokens providertest.Tokens
	streamed, err := p.Complete(tokens.Context(context.Background()), req)
	if err != nil {
		t.Fatalf("streamed: %v", err)
	}
	buffered, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("buffered: %v", err)
	}
	if n := len(tokens.Deltas()); n < 3 || tokens.Text(core.DeltaToken) != streamed.Content {
		t.Errorf("%d deltas joining into %q, want at least 3 joining into %q", n, tokens.Text(core.DeltaToken), streamed.Content)
	}
	delete(streamed.RequestMetadata, "response_id")
	delete(buffered.RequestMetadata, "response_id")
	if streamed.Content != req.Messages[0].Content || streamed.StopReason != "end_turn" || !reflect.DeepEqual(streamed, buffered) {
		t.Errorf("streamed %#v\nbuffered %#v", streamed, buffered)
	}
}
