//go:build integration

package sim

import (
	"flag"
	"os"
	"testing"
)

var emulatorSeeds = flag.Int("emulator-seeds", 30, "seeds to run on DynamoDB Local and fauxqs")

// TestBatteryOnEmulators runs the battery's schedules through the
// DynamoDB and SQS adapters, on DynamoDB Local and fauxqs, with SDK errors
// (throttling, timeouts, 500s after the call was applied, canceled
// transactions) injected into their clients; each seed must end as it
// does without faults on the embedded stores.
func TestBatteryOnEmulators(t *testing.T) {
	ddb, sqs := os.Getenv("BATON_TEST_DYNAMODB_ENDPOINT"), os.Getenv("BATON_TEST_SQS_ENDPOINT")
	if ddb == "" || sqs == "" {
		t.Skip("set BATON_TEST_DYNAMODB_ENDPOINT and BATON_TEST_SQS_ENDPOINT (scripts/emulators.sh run)")
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	type outcome struct {
		seed   uint64
		err    error
		v      []string
		faults map[string]int
	}
	next, out := make(chan uint64), make(chan outcome)
	const workers = 3 // the emulators' round trips, not the CPU, bound a seed
	for range workers {
		go func() {
			for seed := range next {
				clean, err := Run(seed, Options{}, false)
				if err != nil {
					out <- outcome{seed: seed, err: err}
					continue
				}
				faulty, err := Run(seed, Options{DynamoDBEndpoint: ddb, SQSEndpoint: sqs}, true)
				out <- outcome{seed: seed, err: err, v: Check(faulty, clean), faults: faulty.Faults}
			}
		}()
	}
	go func() {
		for seed := uint64(1); seed <= uint64(*emulatorSeeds); seed++ {
			next <- seed
		}
		close(next)
	}()
	faults := map[string]int{}
	for range *emulatorSeeds {
		o := <-out
		if o.err != nil || len(o.v) > 0 {
			t.Errorf("seed %d on the emulators: %v %v", o.seed, o.err, o.v)
		}
		for k, n := range o.faults {
			faults[k] += n
		}
	}
	t.Logf("%d seeds on DynamoDB Local and fauxqs; faults: %v", *emulatorSeeds, faults)
	for _, k := range sdkFaults {
		if faults[k] == 0 {
			t.Errorf("no %s injected", k)
		}
	}
}
