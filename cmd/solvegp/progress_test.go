package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestProgressTerminal(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, 200, 4)
	p.tty = true
	p.update(1, 0, -123.5, time.Second)
	p.update(2, 0, -120, time.Second) // within the interval: not drawn
	p.last = time.Time{}
	p.update(100, 1, -50.25, 10*time.Second)
	p.update(200, 3, -40, 20*time.Second) // the last step is always drawn
	p.done()
	out := buf.String()
	lines := strings.Split(out, "\r")
	if len(lines) != 4 || !strings.HasSuffix(out, "\n") {
		t.Fatalf("%d redraws in %q", len(lines)-1, out)
	}
	if !strings.Contains(lines[2], " 50% [============            ] step 100/200  epoch 2/4  avg bound -50.25  elapsed 0:10  ETA 0:10") {
		t.Fatalf("line %q", lines[2])
	}
	if !strings.Contains(lines[3], "100% [========================] step 200/200  epoch 4/4") || !strings.Contains(lines[3], "ETA 0:00") {
		t.Fatalf("line %q", lines[3])
	}
	// A shorter line is padded to cover the previous one.
	if len(lines[2]) < len(lines[1]) {
		t.Fatalf("no padding: %q then %q", lines[1], lines[2])
	}
}

func TestProgressLog(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, 100, 0)
	for s := 1; s <= 100; s++ {
		p.update(s, 0, float64(-s), time.Duration(s)*time.Millisecond)
	}
	p.done()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 11 || strings.Contains(buf.String(), "\r") || strings.Contains(lines[0], "epoch") {
		t.Fatalf("log mode wrote %d lines: %q", len(lines), buf.String())
	}
	if formatDuration(3725*time.Second) != "1:02:05" || formatDuration(65*time.Second) != "1:05" {
		t.Fatal("formatDuration")
	}
	// The bound shown is a moving average, labelled as one (the summary's
	// bound is the full-data bound at the end), also without a step count.
	for _, l := range lines {
		if !strings.Contains(l, "  avg bound -") {
			t.Fatalf("line %q", l)
		}
	}
	buf.Reset()
	open := newProgress(&buf, 0, 0)
	open.update(3, 0, -2.5, time.Second)
	if got := strings.TrimSpace(buf.String()); got != "step 3  epoch 1  avg bound -2.5  elapsed 0:01" {
		t.Fatalf("no total: %q", got)
	}
	var nilBar *progress
	nilBar.update(1, 0, 0, 0) // -quiet: a nil bar does nothing
	nilBar.done()
}
