package train

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
)

func TestAdamState(t *testing.T) {
	a := NewAdam(3)
	a.Ascend([]float64{1, 2, 3}, []float64{0.5, -1, 2}, 0.1)
	a.Ascend([]float64{1, 2, 3}, []float64{0.1, 1, -2}, 0.1)
	s := a.State()
	if s.T != 2 || len(s.M) != 3 || len(s.V) != 3 {
		t.Fatalf("state %+v", s)
	}
	s.M[0] = 99 // a copy
	if a.State().M[0] == 99 {
		t.Error("State shares the moments")
	}
	s = a.State()
	b := NewAdam(3)
	if err := b.SetState(s); err != nil {
		t.Fatal(err)
	}
	pa, pb := []float64{1, 1, 1}, []float64{1, 1, 1}
	a.Ascend(pa, []float64{1, 2, 3}, 0.01)
	b.Ascend(pb, []float64{1, 2, 3}, 0.01)
	for i := range pa {
		if pa[i] != pb[i] {
			t.Fatalf("restored optimizer steps differently: %v vs %v", pa, pb)
		}
	}
	for _, bad := range []AdamState{
		{M: make([]float64, 2), V: make([]float64, 3)},
		{M: make([]float64, 3), V: make([]float64, 3), T: -1},
		{M: []float64{0, math.NaN(), 0}, V: make([]float64, 3)},
		{M: make([]float64, 3), V: []float64{0, -1, 0}},
		{M: make([]float64, 3), V: []float64{0, math.Inf(1), 0}},
	} {
		before := b.State()
		if err := b.SetState(bad); err == nil {
			t.Errorf("bad state %+v accepted", bad)
		}
		if after := b.State(); after.T != before.T || after.M[0] != before.M[0] {
			t.Error("a rejected state changed the optimizer")
		}
	}
}

// gobRoundTrip encodes ck with encoding/gob and decodes it, as a program
// storing checkpoints in files would.
func gobRoundTrip(t *testing.T, ck Checkpoint) Checkpoint {
	t.Helper()
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&ck); err != nil {
		t.Fatal(err)
	}
	var back Checkpoint
	if err := gob.NewDecoder(&buf).Decode(&back); err != nil {
		t.Fatal(err)
	}
	return back
}

// resumeCase is a training configuration of the resume tests with a maker
// of fresh models for it.
type resumeCase struct {
	name  string
	cfg   Config
	model func() Model
}

// resumeCases returns the resume tests' configurations, each for the given
// number of epochs: Adam alone, a step-decay schedule, and natural steps
// (from the shared gradient, and with a fresh gradient for Adam).
func resumeCases(epochs int) []resumeCase {
	blr := func() Model { return newExact(newBLR(3)) }
	natural := func() Model {
		return &gp.NaturalGradient{ObjectiveModel: newExact(newBLR(3)), Factors: []gp.GaussianFactor{blrFactor(3)}}
	}
	return []resumeCase{
		{"adam", Config{Epochs: epochs, BatchSize: 16, Schedule: Constant(0.05), Seed: 3}, blr},
		{"decay", Config{Epochs: epochs, BatchSize: 20, Schedule: StepDecay{0.1, 0.5, 7}, Seed: 4}, blr},
		{"natural", Config{Epochs: epochs, BatchSize: 16, Schedule: Constant(0.05), NaturalStep: 0.3, NaturalSharedGradient: true, Seed: 5}, natural},
		{"natural-fresh", Config{Epochs: epochs, BatchSize: 16, Schedule: Constant(0.05), NaturalStep: 0.3, Seed: 6}, natural},
		{"random", Config{Epochs: epochs, BatchSize: 16, Schedule: Constant(0.05), Seed: 7}, func() Model { return newNoisy(newExact(newBLR(3))) }},
		// NaturalGradient passes the wrapped model's random state through.
		{"natural-random", Config{Epochs: epochs, BatchSize: 16, Schedule: Constant(0.05), NaturalStep: 0.3, NaturalSharedGradient: true, Seed: 8},
			func() Model {
				return &gp.NaturalGradient{ObjectiveModel: newNoisy(newExact(newBLR(3))), Factors: []gp.GaussianFactor{blrFactor(3)}}
			}},
	}
}

// TestResumeEqualsNoStop stops runs at the end of an epoch, round-trips
// the checkpoint through gob, resumes on a fresh model at the saved
// parameters and checks that the final parameters and the callbacks' step
// and epoch numbers are those of the uninterrupted run, bit for bit: with
// Adam alone, with a step-decay schedule, and with natural steps from the
// shared gradient.
func TestResumeEqualsNoStop(t *testing.T) {
	x, y := blrData(90, 31)
	for _, c := range resumeCases(6) {
		t.Run(c.name, func(t *testing.T) {
			model := c.model
			type mark struct{ epoch, steps int }
			var full []mark
			cfg := c.cfg
			cfg.OnEpoch = func(e EpochInfo) error { full = append(full, mark{e.Epoch, e.Steps}); return nil }
			m0 := model()
			r0, err := Fit(context.Background(), m0, x, y, cfg)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]float64, m0.NumParams())
			m0.Params(want)

			for stopAfter := 1; stopAfter < cfg.Epochs; stopAfter += 2 {
				var got []mark
				var ck Checkpoint
				var saved []float64
				m1 := model()
				cfg1 := c.cfg
				cfg1.OnEpoch = func(e EpochInfo) error {
					got = append(got, mark{e.Epoch, e.Steps})
					if e.Epoch+1 == stopAfter {
						ck = e.Checkpoint()
						saved = make([]float64, m1.NumParams())
						m1.Params(saved)
						return ErrStop
					}
					return nil
				}
				if _, err := Fit(context.Background(), m1, x, y, cfg1); err != nil {
					t.Fatal(err)
				}
				back := gobRoundTrip(t, ck)
				m2 := model()
				if err := m2.SetParams(saved); err != nil {
					t.Fatal(err)
				}
				cfg2 := c.cfg
				cfg2.Resume = &back
				cfg2.OnEpoch = func(e EpochInfo) error { got = append(got, mark{e.Epoch, e.Steps}); return nil }
				r2, err := Fit(context.Background(), m2, x, y, cfg2)
				if err != nil {
					t.Fatal(err)
				}
				p := make([]float64, m2.NumParams())
				m2.Params(p)
				for i := range p {
					if p[i] != want[i] {
						t.Fatalf("stopped after epoch %d: resumed parameters %v, uninterrupted %v", stopAfter, p, want)
					}
				}
				if r2.Steps != r0.Steps || r2.Epochs != r0.Epochs || len(got) != len(full) {
					t.Fatalf("stopped after epoch %d: steps %d/%d, epochs %d/%d, callbacks %v vs %v", stopAfter, r2.Steps, r0.Steps, r2.Epochs, r0.Epochs, got, full)
				}
				for i := range got {
					if got[i] != full[i] {
						t.Fatalf("stopped after epoch %d: epoch callbacks %v, uninterrupted %v", stopAfter, got, full)
					}
				}
			}
			// Restarting Adam from zero moments (what checkpoints without
			// its state did) is not the same run: the test can tell.
			m3 := model()
			var saved []float64
			var ck Checkpoint
			cfg3 := c.cfg
			cfg3.OnEpoch = func(e EpochInfo) error {
				if e.Epoch == 2 {
					ck = e.Checkpoint()
					saved = make([]float64, m3.NumParams())
					m3.Params(saved)
					return ErrStop
				}
				return nil
			}
			if _, err := Fit(context.Background(), m3, x, y, cfg3); err != nil {
				t.Fatal(err)
			}
			ck.Adam = AdamState{M: make([]float64, len(ck.Adam.M)), V: make([]float64, len(ck.Adam.V))}
			m4 := model()
			m4.SetParams(saved)
			cfg4 := c.cfg
			cfg4.Resume = &ck
			if _, err := Fit(context.Background(), m4, x, y, cfg4); err != nil {
				t.Fatal(err)
			}
			p := make([]float64, m4.NumParams())
			m4.Params(p)
			same := true
			for i := range p {
				same = same && p[i] == want[i]
			}
			if same {
				t.Error("a fresh Adam state gave the same parameters: the comparison cannot fail")
			}
		})
	}
}

// TestResumeMidEpoch stops runs after a step inside an epoch (and after
// an epoch's last mini-batch, before its end-of-epoch callback), resumes
// from StepInfo.Checkpoint round-tripped through gob on a fresh model at the
// saved parameters, and checks the final parameters and the step and epoch
// callbacks against the uninterrupted run, bit for bit.
func TestResumeMidEpoch(t *testing.T) {
	x, y := blrData(90, 33)
	for _, c := range resumeCases(4) {
		t.Run(c.name, func(t *testing.T) {
			model := c.model
			type mark struct {
				epoch, steps int
				obj          float64 // the epoch's mean objective (epoch marks)
			}
			var fullSteps, fullEpochs []mark
			cfg := c.cfg
			cfg.OnStep = func(si StepInfo) error { fullSteps = append(fullSteps, mark{si.Epoch, si.Step, 0}); return nil }
			cfg.OnEpoch = func(e EpochInfo) error {
				fullEpochs = append(fullEpochs, mark{e.Epoch, e.Steps, e.Objective})
				return nil
			}
			m0 := model()
			if _, err := Fit(context.Background(), m0, x, y, cfg); err != nil {
				t.Fatal(err)
			}
			want := make([]float64, m0.NumParams())
			m0.Params(want)
			nb := (90 + c.cfg.BatchSize - 1) / c.cfg.BatchSize
			for _, stopAt := range []int{1, 2, nb - 1, nb, nb + 1, 2*nb + 2} {
				var steps, epochs []mark
				var ck Checkpoint
				var saved []float64
				m1 := model()
				cfg1 := c.cfg
				cfg1.OnStep = func(si StepInfo) error {
					steps = append(steps, mark{si.Epoch, si.Step, 0})
					if si.Step == stopAt {
						ck = si.Checkpoint()
						saved = make([]float64, m1.NumParams())
						m1.Params(saved)
						return ErrStop
					}
					return nil
				}
				cfg1.OnEpoch = func(e EpochInfo) error { epochs = append(epochs, mark{e.Epoch, e.Steps, e.Objective}); return nil }
				if _, err := Fit(context.Background(), m1, x, y, cfg1); err != nil {
					t.Fatal(err)
				}
				if wantB := (stopAt-1)%nb + 1; ck.Batches != wantB || ck.Epochs != (stopAt-1)/nb || ck.Steps != stopAt {
					t.Fatalf("stopped at step %d: checkpoint epochs %d, batches %d, steps %d", stopAt, ck.Epochs, ck.Batches, ck.Steps)
				}
				back := gobRoundTrip(t, ck)
				m2 := model()
				if err := m2.SetParams(saved); err != nil {
					t.Fatal(err)
				}
				cfg2 := c.cfg
				cfg2.Resume = &back
				cfg2.OnStep = func(si StepInfo) error { steps = append(steps, mark{si.Epoch, si.Step, 0}); return nil }
				cfg2.OnEpoch = func(e EpochInfo) error { epochs = append(epochs, mark{e.Epoch, e.Steps, e.Objective}); return nil }
				if _, err := Fit(context.Background(), m2, x, y, cfg2); err != nil {
					t.Fatal(err)
				}
				p := make([]float64, m2.NumParams())
				m2.Params(p)
				for i := range p {
					if p[i] != want[i] {
						t.Fatalf("stopped at step %d: resumed parameters %v, uninterrupted %v", stopAt, p, want)
					}
				}
				if fmt.Sprint(steps) != fmt.Sprint(fullSteps) || fmt.Sprint(epochs) != fmt.Sprint(fullEpochs) {
					t.Fatalf("stopped at step %d: callbacks %v / %v, uninterrupted %v / %v", stopAt, steps, epochs, fullSteps, fullEpochs)
				}
			}
		})
	}
}

// TestResumeValidation checks that a resumed run keeps the validation
// bookkeeping: the best parameters, their epoch and score, and the
// early-stopping count, so that the kept parameters, Result and the stop
// are those of the uninterrupted run, bit for bit. The validation score is
// a non-monotonic function of the parameters, so the best epoch is not the
// last and patience runs out.
func TestResumeValidation(t *testing.T) {
	x, y := blrData(90, 34)
	score := func(m Model) func() (float64, map[string]float64, error) {
		return func() (float64, map[string]float64, error) {
			p := make([]float64, m.NumParams())
			m.Params(p)
			return math.Cos(25*p[0] + 5*p[1]), nil, nil
		}
	}
	base := Config{Epochs: 12, BatchSize: 16, Schedule: Constant(0.05), Seed: 6, Patience: 3}
	m0 := newExact(newBLR(3))
	cfg := base
	cfg.Validate = score(m0)
	r0, err := Fit(context.Background(), m0, x, y, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, m0.NumParams())
	m0.Params(want)
	if r0.Reason != EarlyStopped || r0.BestEpoch < 1 || r0.BestEpoch >= r0.Epochs-1 {
		t.Fatalf("uninterrupted run: %v, best epoch %d of %d: the test needs an early stop with an earlier best", r0.Reason, r0.BestEpoch, r0.Epochs)
	}
	nb := (90 + 15) / 16
	for stopAt := nb + 2; stopAt < r0.Steps; stopAt += nb - 1 {
		var ck Checkpoint
		var saved []float64
		m1 := newExact(newBLR(3))
		cfg1 := base
		cfg1.Validate = score(m1)
		cfg1.OnStep = func(si StepInfo) error {
			if si.Step == stopAt {
				ck = si.Checkpoint()
				saved = make([]float64, m1.NumParams())
				m1.Params(saved)
				return ErrStop
			}
			return nil
		}
		if _, err := Fit(context.Background(), m1, x, y, cfg1); err != nil {
			t.Fatal(err)
		}
		if ck.Best == nil {
			t.Fatalf("stopped at step %d: no best parameters in the checkpoint", stopAt)
		}
		back := gobRoundTrip(t, ck)
		m2 := newExact(newBLR(3))
		if err := m2.SetParams(saved); err != nil {
			t.Fatal(err)
		}
		cfg2 := base
		cfg2.Validate = score(m2)
		cfg2.Resume = &back
		r2, err := Fit(context.Background(), m2, x, y, cfg2)
		if err != nil {
			t.Fatal(err)
		}
		p := make([]float64, m2.NumParams())
		m2.Params(p)
		if fmt.Sprint(p) != fmt.Sprint(want) || r2.BestEpoch != r0.BestEpoch || r2.BestScore != r0.BestScore ||
			r2.Reason != r0.Reason || r2.Epochs != r0.Epochs || r2.Steps != r0.Steps {
			t.Fatalf("stopped at step %d: resumed %v (best epoch %d, score %v, %v after %d epochs), uninterrupted %v (%d, %v, %v after %d)",
				stopAt, p, r2.BestEpoch, r2.BestScore, r2.Reason, r2.Epochs, want, r0.BestEpoch, r0.BestScore, r0.Reason, r0.Epochs)
		}
	}
}

// failOn wraps a model so that its objective is NaN on the mini-batches
// whose targets are in bad (keyed by batchKey), the same batches in every
// run, however it was stopped and resumed; keys records every batch seen.
type failOn struct {
	*exact
	bad  map[string]bool
	keys []string
}

func batchKey(y []float64) string { return fmt.Sprint(y) }

func (f *failOn) Objective(x *mat.Dense, y []float64, n int, grad []float64) (float64, error) {
	k := batchKey(y)
	f.keys = append(f.keys, k)
	v, err := f.exact.Objective(x, y, n, grad)
	if f.bad[k] {
		return math.NaN(), err
	}
	return v, err
}

// TestResumeAfterRejections resumes from the end of an epoch whose last
// mini-batch was rejected: the consecutive-failure count, the total and
// per-epoch rejection counts and the learning-rate recovery continue as in
// the uninterrupted run (parameters and callbacks bit for bit), and a
// MaxFailures run of rejections that spans the checkpoint still ends the
// run with ErrDiverged after as many steps and rejections.
func TestResumeAfterRejections(t *testing.T) {
	x, y := blrData(90, 35)
	base := Config{Epochs: 4, BatchSize: 16, Schedule: Constant(0.05), Seed: 7, RecoverAfter: 3}
	nb := (90 + 15) / 16
	// The batches of an unbroken run, to choose which ones fail.
	probe := &failOn{exact: newExact(newBLR(3))}
	if _, err := Fit(context.Background(), probe, x, y, base); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		bad      []int // indices into the unbroken run's batches
		maxFail  int
		diverged bool
	}{
		{"recover", []int{nb - 1}, 0, false},
		{"diverge", []int{nb - 1, nb}, 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := map[string]bool{}
			for _, i := range c.bad {
				bad[probe.keys[i]] = true
			}
			cfg := base
			cfg.MaxFailures = c.maxFail
			type mark struct {
				epoch, steps, rejected int
				obj                    float64
			}
			run := func(m *failOn, cfg Config, marks *[]mark, stop bool) (Result, *Checkpoint, []float64, error) {
				var ck *Checkpoint
				var saved []float64
				cfg.OnEpoch = func(e EpochInfo) error {
					*marks = append(*marks, mark{e.Epoch, e.Steps, e.Rejected, e.Objective})
					if stop && e.Epoch == 0 {
						c := e.Checkpoint()
						ck = &c
						saved = make([]float64, m.NumParams())
						m.Params(saved)
						return ErrStop
					}
					return nil
				}
				r, err := Fit(context.Background(), m, x, y, cfg)
				return r, ck, saved, err
			}
			var full, got []mark
			m0 := &failOn{exact: newExact(newBLR(3)), bad: bad}
			r0, _, _, err0 := run(m0, cfg, &full, false)
			if c.diverged != errors.Is(err0, ErrDiverged) || r0.Rejected != len(c.bad) {
				t.Fatalf("unbroken run: %v, %d rejected", err0, r0.Rejected)
			}
			want := make([]float64, m0.NumParams())
			m0.Params(want)

			_, ck, saved, err1 := run(&failOn{exact: newExact(newBLR(3)), bad: bad}, cfg, &got, true)
			if err1 != nil {
				t.Fatal(err1)
			}
			if ck.Failures != 1 || ck.Rejected != 1 {
				t.Fatalf("checkpoint after a rejected last batch: failures %d, rejected %d", ck.Failures, ck.Rejected)
			}
			m2 := &failOn{exact: newExact(newBLR(3)), bad: bad}
			if err := m2.SetParams(saved); err != nil {
				t.Fatal(err)
			}
			cfg2 := cfg
			cfg2.Resume = ck
			r2, _, _, err2 := run(m2, cfg2, &got, false)
			if c.diverged != errors.Is(err2, ErrDiverged) {
				t.Fatalf("resumed run: %v, unbroken %v", err2, err0)
			}
			if c.diverged {
				// The unbroken run goes back to its last good point, which
				// a checkpoint does not keep (see Checkpoint): compare the
				// counts only.
				if r2.Rejected != r0.Rejected || r2.Steps != r0.Steps || fmt.Sprint(got) != fmt.Sprint(full) {
					t.Fatalf("resumed: %d rejected, %d steps, epochs %v; unbroken %d, %d, %v", r2.Rejected, r2.Steps, got, r0.Rejected, r0.Steps, full)
				}
				return
			}
			p := make([]float64, m2.NumParams())
			m2.Params(p)
			if fmt.Sprint(p) != fmt.Sprint(want) || r2.Rejected != r0.Rejected || r2.Steps != r0.Steps || r2.RateScale != r0.RateScale {
				t.Fatalf("resumed %v (%d rejected, %d steps, rate scale %v), unbroken %v (%d, %d, %v)",
					p, r2.Rejected, r2.Steps, r2.RateScale, want, r0.Rejected, r0.Steps, r0.RateScale)
			}
			if fmt.Sprint(got) != fmt.Sprint(full) {
				t.Fatalf("epoch callbacks %v, unbroken %v", got, full)
			}
		})
	}
}

// TestResumeFinishedRun resumes from the final epoch checkpoint of runs
// that ended by MaxSteps at an epoch's end and by early stopping: nothing
// more is trained or validated, and the result is the unbroken run's.
func TestResumeFinishedRun(t *testing.T) {
	x, y := blrData(90, 36)
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"max-steps", Config{MaxSteps: 12, BatchSize: 15, Schedule: Constant(0.05), Seed: 8}},
		{"early-stop", Config{Epochs: 30, BatchSize: 16, Schedule: Constant(0.05), Seed: 9, Patience: 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m0 := newExact(newBLR(3))
			validations := 0
			cfg := c.cfg
			if cfg.Patience > 0 {
				cfg.Validate = func() (float64, map[string]float64, error) {
					validations++
					p := make([]float64, m0.NumParams())
					m0.Params(p)
					return math.Cos(25*p[0] + 5*p[1]), nil, nil
				}
			}
			var last Checkpoint
			var saved []float64
			cfg.OnEpoch = func(e EpochInfo) error {
				last = e.Checkpoint()
				saved = make([]float64, m0.NumParams())
				m0.Params(saved)
				return nil
			}
			r0, err := Fit(context.Background(), m0, x, y, cfg)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]float64, m0.NumParams())
			m0.Params(want)
			if wantReason := map[bool]StopReason{false: Finished, true: EarlyStopped}[cfg.Patience > 0]; r0.Reason != wantReason {
				t.Fatalf("unbroken run stopped by %v", r0.Reason)
			}
			if err := m0.SetParams(saved); err != nil {
				t.Fatal(err)
			}
			before, epochs := validations, 0
			cfg.OnEpoch = func(EpochInfo) error { epochs++; return nil }
			cfg.Resume = &last
			r2, err := Fit(context.Background(), m0, x, y, cfg)
			if err != nil {
				t.Fatal(err)
			}
			p := make([]float64, m0.NumParams())
			m0.Params(p)
			if epochs != 0 || validations != before || r2.Reason != r0.Reason || r2.Steps != r0.Steps || r2.Epochs != r0.Epochs ||
				r2.BestEpoch != r0.BestEpoch || fmt.Sprint(p) != fmt.Sprint(want) {
				t.Fatalf("resumed finished run: %d epochs, %d validations, %+v; unbroken %+v", epochs, validations-before, r2, r0)
			}
		})
	}
}

func TestResumeBadState(t *testing.T) {
	x, y := blrData(20, 32)
	b := newBLR(3)
	p := b.NumParams()
	ok := AdamState{M: make([]float64, p), V: make([]float64, p)}
	for _, r := range []Checkpoint{
		{Epochs: -1, RateScale: 1, Adam: ok},
		{Epochs: 1 << 40, Steps: 3, Rejected: 2, RateScale: 1, Adam: ok}, // more epochs than batches drawn
		{Steps: -2, RateScale: 1, Adam: ok},
		{RateScale: 0, Adam: ok},
		{RateScale: 1.5, Adam: ok},
		{RateScale: math.NaN(), Adam: ok},
		{Accepted: -1, RateScale: 1, Adam: ok},
		{Failures: -1, RateScale: 1, Adam: ok},
		{Rejected: -1, RateScale: 1, Adam: ok},
		{EpochRejected: 1, RateScale: 1, Adam: ok},
		{EpochObjective: math.NaN(), RateScale: 1, Adam: ok},
		{Batches: -1, RateScale: 1, Adam: ok},
		{Batches: 2, RateScale: 1, Adam: ok},                                        // 20 rows in one batch
		{Epochs: 1, Steps: 2, RateScale: 1, Adam: ok},                               // more batches than the epochs hold
		{Epochs: 2, Steps: math.MaxInt - 1, Rejected: 2, RateScale: 0.25, Adam: ok}, // the counts overflow
		{Epochs: 2, Steps: 2, RateScale: 1, Adam: ok, SinceImprove: -1},
		{Epochs: 2, Steps: 2, RateScale: 1, Adam: ok, Best: make([]float64, p-1)},
		{Epochs: 2, Steps: 2, RateScale: 1, Adam: ok, Best: make([]float64, p), BestEpoch: 2},
		{Epochs: 2, Steps: 2, RateScale: 1, Adam: ok, Best: make([]float64, p), BestScore: math.Inf(1)},
		{Epochs: 2, Steps: 2, RateScale: 1, Adam: ok, Best: []float64{0, math.NaN(), 0, 0, 0, 0, 0, 0, 0, 0, 0}[:p]},
		{RateScale: 1, Adam: AdamState{M: make([]float64, p-1), V: make([]float64, p)}},
	} {
		if _, err := Fit(context.Background(), b, x, y, Config{Epochs: 2, Resume: &r}); err == nil {
			t.Errorf("resume state %+v accepted", r)
		}
	}
	// Two rejections need two halvings of RateScale that only an accepted
	// step can undo: with one accepted step, RateScale 1 is impossible and
	// 0.25 possible. Only the back-off check tells them apart (three
	// epochs of one mini-batch hold the three drawn).
	for _, c := range []struct {
		scale float64
		ok    bool
	}{{1, false}, {0.5, true}, {0.25, true}} {
		r := Checkpoint{Epochs: 3, Steps: 1, Rejected: 2, RateScale: c.scale, Adam: ok}
		_, err := Fit(context.Background(), newBLR(3), x, y, Config{Epochs: 4, Resume: &r})
		if c.ok != (err == nil) || (err != nil && !strings.Contains(err.Error(), "halvings of RateScale")) {
			t.Errorf("1 step, 2 rejections, RateScale %v: %v", c.scale, err)
		}
	}
	// A run already past its epochs does nothing.
	r := Checkpoint{Epochs: 3, Steps: 3, RateScale: 1, Adam: ok}
	before := make([]float64, p)
	b.Params(before)
	res, err := Fit(context.Background(), b, x, y, Config{Epochs: 3, Resume: &r})
	if err != nil || res.Steps != 3 || res.Epochs != 3 {
		t.Errorf("finished run: %+v, %v", res, err)
	}
}

// TestResumeReplayCancel checks that the replay of a resumed run's finished
// epochs heeds the context: a damaged checkpoint that claims a vast number
// of epochs (consistent with its step count) must not hang Fit.
func TestResumeReplayCancel(t *testing.T) {
	x, y := blrData(20, 34)
	b := newBLR(3)
	p := b.NumParams()
	r := Checkpoint{Epochs: 1 << 34, Steps: 1 << 34, RateScale: 1, Adam: AdamState{M: make([]float64, p), V: make([]float64, p)}}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	// Without the check the replay runs for about an hour: the test times out.
	res, err := Fit(ctx, b, x, y, Config{Epochs: 1<<34 + 1, Resume: &r})
	if !errors.Is(err, context.DeadlineExceeded) || res.Reason != Canceled {
		t.Errorf("Fit = %v, %v; want the context's error", res.Reason, err)
	}
}

// TestResumeHugeCounts checks resumes from checkpoints whose counts are
// vast: one consistent with the data but at or past the run's limits
// returns at once, without replaying its 2⁴⁰ shuffles, and one whose
// epochs only its rejections could explain is refused.
func TestResumeHugeCounts(t *testing.T) {
	x, y := blrData(20, 35)
	b := newBLR(3)
	p := b.NumParams()
	p0 := make([]float64, p)
	b.Params(p0)
	adam := AdamState{M: make([]float64, p), V: make([]float64, p)}
	// Without the checks each of these would replay for hours: the
	// deadline makes them fail instead.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const huge = 1 << 40
	for _, c := range []struct {
		name   string
		cfg    Config
		ck     Checkpoint
		epochs int
	}{
		{"past the epochs", Config{Epochs: 1}, Checkpoint{Epochs: huge, Steps: huge, RateScale: 1, Adam: adam}, huge},
		{"at the step limit", Config{MaxSteps: 5}, Checkpoint{Epochs: huge, Steps: huge, RateScale: 1, Adam: adam}, huge},
		// The run ends its epoch, which needs no shuffle.
		{"at the step limit mid-epoch", Config{MaxSteps: 5, BatchSize: 10}, Checkpoint{Epochs: huge, Batches: 1, Steps: 2 * huge, RateScale: 1, Adam: adam}, huge + 1},
	} {
		c.cfg.Resume = &c.ck
		res, err := Fit(ctx, b, x, y, c.cfg)
		if err != nil || res.Reason != Finished || res.Epochs != c.epochs || res.Steps != c.ck.Steps {
			t.Errorf("%s: %+v, %v", c.name, res, err)
		}
		got := make([]float64, p)
		if b.Params(got); fmt.Sprint(got) != fmt.Sprint(p0) {
			t.Errorf("%s: the model moved", c.name)
		}
	}
	// The epochs could only come from a run that rejected almost every
	// mini-batch, but its RateScale was never halved: only the back-off
	// check refuses it (its epochs hold its mini-batches).
	r := Checkpoint{Epochs: huge + 3, Steps: 3, Rejected: huge, RateScale: 1, Adam: adam}
	if _, err := Fit(ctx, b, x, y, Config{MaxSteps: 5, Resume: &r}); err == nil || !strings.Contains(err.Error(), "halvings of RateScale") {
		t.Errorf("rejections beyond the back-off accepted: %v", err)
	}
}

func TestNaturalSharedGradientErrors(t *testing.T) {
	x, y := blrData(20, 33)
	if _, err := Fit(context.Background(), newBLR(3), x, y, Config{Epochs: 1, NaturalSharedGradient: true}); err == nil {
		t.Error("NaturalSharedGradient without NaturalStep accepted")
	}
	// blr implements NaturalStep but not NaturalUpdate.
	if _, err := Fit(context.Background(), newBLR(3), x, y, Config{Epochs: 1, NaturalStep: 1, NaturalSharedGradient: true}); err == nil {
		t.Error("NaturalSharedGradient accepted for a model without NaturalUpdate")
	}
	// A natural step that fails (indefinite precision at γ = 1 for a
	// gradient the test forces) is rejected and backed off, never kept.
	b := newBLR(3)
	p0 := make([]float64, b.NumParams())
	b.Params(p0)
	ng := &gp.NaturalGradient{ObjectiveModel: &scaledGrad{blr: b, scale: -1e4}, Factors: []gp.GaussianFactor{blrFactor(3)}}
	res, err := Fit(context.Background(), ng, x, y, Config{MaxSteps: 5, NaturalStep: 1, NaturalSharedGradient: true, MaxFailures: 3})
	if !errors.Is(err, ErrDiverged) || res.Rejected != 3 || !strings.Contains(err.Error(), "natural-gradient step failed") {
		t.Errorf("failing natural steps: %+v, %v", res, err)
	}
	p := make([]float64, b.NumParams())
	b.Params(p)
	for i := range p {
		if p[i] != p0[i] {
			t.Fatalf("parameters moved by failed steps: %v → %v", p0, p)
		}
	}
}

// exact returns from Params exactly what SetParams received (the BLR
// model's log/exp of the Cholesky diagonal does not round-trip to the last
// bit), as package gp's models do: exact resumption needs it.
type exact struct {
	Model
	p []float64
}

func newExact(m Model) *exact {
	e := &exact{Model: m, p: make([]float64, m.NumParams())}
	m.Params(e.p)
	return e
}

func (e *exact) Params(dst []float64) { copy(dst, e.p) }
func (e *exact) SetParams(src []float64) error {
	if err := e.Model.SetParams(src); err != nil {
		return err
	}
	copy(e.p, src)
	return nil
}

// scaledGrad multiplies the BLR model's gradient; a large negative scale
// makes natural steps of size 1 overshoot into indefinite precisions.
type scaledGrad struct {
	*blr
	scale float64
}

func (s *scaledGrad) Objective(x *mat.Dense, y []float64, n int, grad []float64) (float64, error) {
	f, err := s.blr.Objective(x, y, n, grad)
	for i := range grad {
		grad[i] *= s.scale
	}
	return f, err
}

// noisy perturbs a model's gradient with draws from its own generator, as a
// Monte Carlo estimate would, and implements RandomStater.
type noisy struct {
	Model
	src *rand.PCG
	rng *rand.Rand
}

func newNoisy(m Model) *noisy {
	src := rand.NewPCG(8, 9)
	return &noisy{Model: m, src: src, rng: rand.New(src)}
}

func (n *noisy) Objective(x *mat.Dense, y []float64, nTotal int, grad []float64) (float64, error) {
	f, err := n.Model.Objective(x, y, nTotal, grad)
	for i := range grad {
		grad[i] *= 1 + 0.2*n.rng.NormFloat64()
	}
	return f, err
}

func (n *noisy) RandomState() []byte {
	b, err := n.src.MarshalBinary()
	if err != nil {
		panic(err)
	}
	return b
}

func (n *noisy) SetRandomState(state []byte) error { return n.src.UnmarshalBinary(state) }

// TestResumeRandomState checks that the checkpoint's random state is what
// makes the "random" resume cases exact: without it a resumed run of a
// model that draws random numbers ends elsewhere. A state the model cannot
// use, or one given to a model without RandomStater, is an error.
func TestResumeRandomState(t *testing.T) {
	x, y := blrData(90, 35)
	cfg := Config{Epochs: 3, BatchSize: 16, Schedule: Constant(0.05), Seed: 7}
	run := func(m Model, c Config) []float64 {
		t.Helper()
		if _, err := Fit(context.Background(), m, x, y, c); err != nil {
			t.Fatal(err)
		}
		p := make([]float64, m.NumParams())
		m.Params(p)
		return p
	}
	want := run(newNoisy(newExact(newBLR(3))), cfg)

	m1 := newNoisy(newExact(newBLR(3)))
	var ck Checkpoint
	var saved []float64
	c1 := cfg
	c1.OnStep = func(si StepInfo) error {
		if si.Step == 8 {
			ck = si.Checkpoint()
			saved = make([]float64, m1.NumParams())
			m1.Params(saved)
			return ErrStop
		}
		return nil
	}
	run(m1, c1)
	if ck.Random == nil {
		t.Fatal("the checkpoint holds no random state")
	}
	resume := func(ck Checkpoint) []float64 {
		m2 := newNoisy(newExact(newBLR(3)))
		if err := m2.SetParams(saved); err != nil {
			t.Fatal(err)
		}
		c2 := cfg
		c2.Resume = &ck
		return run(m2, c2)
	}
	if got := resume(gobRoundTrip(t, ck)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("resumed %v, uninterrupted %v", got, want)
	}
	noState := ck
	noState.Random = nil
	if got := resume(noState); fmt.Sprint(got) == fmt.Sprint(want) {
		t.Error("a resume without the random state ends where the uninterrupted run does: the test cannot see the state")
	}

	bad := ck
	bad.Random = []byte("not a state")
	c3 := cfg
	c3.Resume = &bad
	if _, err := Fit(context.Background(), newNoisy(newExact(newBLR(3))), x, y, c3); err == nil {
		t.Error("a bad random state was accepted")
	}
	c3.Resume = &ck
	if _, err := Fit(context.Background(), newExact(newBLR(3)), x, y, c3); err == nil || !strings.Contains(err.Error(), "RandomStater") {
		t.Errorf("a random state for a model without RandomStater: %v", err)
	}
	// A Fit that refuses its configuration leaves the generator alone.
	m4 := newNoisy(newExact(newBLR(3)))
	before := m4.RandomState()
	c3.Frozen = make([]bool, 1)
	if _, err := Fit(context.Background(), m4, x, y, c3); err == nil {
		t.Error("a wrong Frozen length was accepted")
	}
	if !bytes.Equal(m4.RandomState(), before) {
		t.Error("a refused Fit changed the model's random state")
	}
}
