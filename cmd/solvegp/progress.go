package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progress draws a one-line progress bar with a moving average of the
// mini-batch bound ("avg bound", not the bound train reports at the end)
// and an estimate of the remaining time. On a terminal the line is redrawn in
// place with a carriage return at most every interval; otherwise (a log
// file, a pipe) a full line is written at every tenth of the run.
type progress struct {
	w        io.Writer
	tty      bool
	total    int  // total steps (0: unknown)
	base     int  // steps taken before this process started (a resumed run): not timed
	epochs   int  // total epochs (0: not shown)
	lbfgs    bool // L-BFGS iterations: total is only a limit, bound is the current one
	shown    int  // the step of the line last drawn or logged
	nextLog  int  // non-terminal: the next step to log
	interval time.Duration
	last     time.Time
	width    int // length of the last line drawn
	drawn    bool
}

func newProgress(w io.Writer, totalSteps, epochs int) *progress {
	return &progress{w: w, tty: isTerminal(w), total: totalSteps, epochs: epochs, interval: 100 * time.Millisecond, nextLog: 1}
}

// isTerminal reports whether w is a character device such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// update redraws the bar for step (1-based) of epoch (0-based) with the
// moving average of the bound, unless it was drawn less than an interval ago.
func (p *progress) update(step, epoch int, bound float64, elapsed time.Duration) {
	if p == nil {
		return
	}
	now := time.Now()
	if !p.tty {
		if step < p.nextLog && step != p.total && now.Sub(p.last) < 30*time.Second {
			return
		}
		p.nextLog = step + max(1, p.total/10)
	} else if p.drawn && now.Sub(p.last) < p.interval && step != p.total {
		return
	}
	p.last, p.drawn, p.shown = now, true, step
	var b strings.Builder
	if p.lbfgs {
		// No ETA: L-BFGS usually stops well before its iteration limit.
		fmt.Fprintf(&b, "L-BFGS iteration %d (at most %d)  bound %.6g  elapsed %s", step, p.total, bound, formatDuration(elapsed))
	} else if p.total > 0 {
		frac := float64(step) / float64(p.total)
		if frac > 1 {
			frac = 1
		}
		const barWidth = 24
		filled := int(frac * barWidth)
		fmt.Fprintf(&b, "%3.0f%% [%s%s] step %d/%d", 100*frac, strings.Repeat("=", filled), strings.Repeat(" ", barWidth-filled), step, p.total)
		eta := "?"
		if step > p.base {
			rem := time.Duration(float64(elapsed) / float64(step-p.base) * float64(p.total-step))
			eta = formatDuration(rem)
		}
		if p.epochs > 0 {
			fmt.Fprintf(&b, "  epoch %d/%d", epoch+1, p.epochs)
		}
		fmt.Fprintf(&b, "  avg bound %.6g  elapsed %s  ETA %s", bound, formatDuration(elapsed), eta)
	} else {
		fmt.Fprintf(&b, "step %d  epoch %d  avg bound %.6g  elapsed %s", step, epoch+1, bound, formatDuration(elapsed))
	}
	line := b.String()
	if !p.tty {
		fmt.Fprintln(p.w, line)
		return
	}
	pad := ""
	if n := p.width - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	p.width = len(line)
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
}

// newLBFGSProgress returns a progress line for at most maxIter L-BFGS
// iterations, showing the bound at the current point.
func newLBFGSProgress(w io.Writer, maxIter int) *progress {
	p := newProgress(w, maxIter, 0)
	p.lbfgs = true
	return p
}

// final shows step as update does, unless it is already shown, whatever
// the time since the last line: the last iteration of a run that stopped
// before its limit.
func (p *progress) final(step, epoch int, bound float64, elapsed time.Duration) {
	if p == nil || step == p.shown {
		return
	}
	p.nextLog, p.last = 0, time.Time{}
	p.update(step, epoch, bound, elapsed)
}

// done ends the progress line.
func (p *progress) done() {
	if p != nil && p.tty && p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// formatDuration prints d as h:mm:ss or m:ss.
func formatDuration(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
