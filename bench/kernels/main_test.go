package main

import (
	"bytes"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestParseFlagsRejects(t *testing.T) {
	for _, args := range [][]string{
		{"-n", "0"}, {"-n", "x"}, {"-threads", "-1"}, {"-reps", "0"},
		{"-cases", "dgemm-nn,nope"}, {"-peak-time", "0s"}, {"extra"},
		{"-clock", "cpu"}, {"-clock", "thread", "-threads", "1,2"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) accepted", args)
		}
	}
}

// TestRunSmall runs every case at a small order and checks the report has a
// row for each with a positive rate and a measured peak.
func TestRunSmall(t *testing.T) {
	opt, err := parseFlags([]string{"-n", "40", "-threads", "1,2", "-reps", "1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	opt.peakTime = time.Millisecond
	var out bytes.Buffer
	rep, err := run(opt, &out)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * len(kernelCases); len(rep.Results) != want {
		t.Fatalf("%d results, want %d", len(rep.Results), want)
	}
	for _, r := range rep.Results {
		if len(r.Ours) != 1 || !(r.Ours[0] > 0) || !(r.Peak > 0) {
			t.Errorf("%s threads=%d: rates %v, peak %v", r.Case, r.Threads, r.Ours, r.Peak)
		}
		if probe := r.Threads > 1 && runtime.GOMAXPROCS(0) > 1 && runtime.NumCPU() > 1; probe != (r.RoundTrip > 0) {
			t.Errorf("%s threads=%d: round trip %v ns", r.Case, r.Threads, r.RoundTrip)
		}
		if reference.available() != (len(r.Theirs) == 1) {
			t.Errorf("%s: OpenBLAS rates %v with reference available=%v", r.Case, r.Theirs, reference.available())
		}
	}
	if got := strings.Count(out.String(), "\n| dgemm-nn | 40 |"); got != 2 {
		t.Errorf("report has %d dgemm-nn rows, want 2:\n%s", got, out.String())
	}
}

// TestRunThreadClock runs one case timed by the thread's CPU time.
func TestRunThreadClock(t *testing.T) {
	opt, err := parseFlags([]string{"-n", "40", "-threads", "1", "-reps", "2", "-cases", "dgemm-nn", "-clock", "thread"}, io.Discard)
	if err != nil {
		t.Skip("no thread clock here:", err)
	}
	opt.peakTime = time.Millisecond
	var out bytes.Buffer
	rep, err := run(opt, &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 || len(rep.Results[0].Ours) != 2 || !(rep.Results[0].Ours[0] > 0) || !(rep.Results[0].Peak > 0) {
		t.Fatalf("results %+v", rep.Results)
	}
	if rep.Clock != "thread" || !strings.Contains(out.String(), "clock thread") {
		t.Errorf("report does not name the clock:\n%s", out.String())
	}
}
