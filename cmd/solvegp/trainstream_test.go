package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/modelfile"
)

// TestTrainStream trains on three shards named by a pattern with -stream,
// predicts into a Parquet file and reads it back, and checks the flags
// -stream refuses (-collapsed, with its reason, and an empty buffer).
func TestTrainStream(t *testing.T) {
	dir := t.TempDir()
	for seed := uint64(1); seed <= 3; seed++ {
		writeRegression(t, dir, 60, seed)
	}
	model := filepath.Join(dir, "m.json")
	code, out, errOut := runCmd(t, "train", "-stream", "50", "-epochs", "5", "-batch", "40", "-m", "8", "-m2", "4",
		"-quiet", "-out", model, filepath.Join(dir, "reg*.csv"))
	if code != exitOK || !strings.Contains(out, "180 training rows") {
		t.Fatalf("train -stream: exit %d\n%s%s", code, out, errOut)
	}
	pred := filepath.Join(dir, "pred.parquet")
	if code, _, errOut := runCmd(t, "predict", "-model", model, "-out", pred, filepath.Join(dir, "reg2.csv")); code != exitOK {
		t.Fatalf("predict: exit %d: %s", code, errOut)
	}
	tab, err := data.LoadParquet(pred, data.Options{NoTarget: true})
	if err != nil {
		t.Fatal(err)
	}
	if n, c := tab.X.Dims(); n != 60 || c != 4 || strings.Join(tab.Names, ",") != "f_mean,f_var,y_mean,y_var" {
		t.Fatalf("predictions: %d×%d, columns %v", n, c, tab.Names)
	}
	// A truncated Parquet input is an error naming the file.
	b, _ := os.ReadFile(pred)
	cut := filepath.Join(dir, "cut.parquet")
	os.WriteFile(cut, b[:len(b)/2], 0o644)
	if code, _, errOut := runCmd(t, "predict", "-model", model, cut); code == exitOK || !strings.Contains(errOut, cut) {
		t.Errorf("truncated Parquet input: exit %d: %s", code, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-stream", "100", "-collapsed"}, "-collapsed cannot be used with -stream: every L-BFGS iteration"},
		{[]string{"-stream", "0"}, "at least one row"},
	} {
		args := append(append([]string{"train", "-quiet", "-out", filepath.Join(dir, "x.json")}, c.args...), filepath.Join(dir, "reg1.csv"))
		if code, _, errOut := runCmd(t, args...); code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d: %s", c.args, code, errOut)
		}
	}
}

// TestTrainStreamCheckpointResume interrupts a streamed run with -valid and
// -checkpoint in the middle of an epoch, runs the same command again and
// checks that it continues to the parameters, summary and validation
// curve of the uninterrupted run bit for bit: the checkpoint's epoch and
// batch count place the resumed run in the Stream's seeded order, and
// the held-out rows are the same. It also checks that the validation
// metrics are those of the held-out rows (about -valid of them), and that
// a checkpoint is refused after the data or the shuffle buffer change.
func TestTrainStreamCheckpointResume(t *testing.T) {
	dir := t.TempDir()
	for seed := uint64(1); seed <= 3; seed++ {
		writeRegression(t, dir, 60, seed)
	}
	glob := filepath.Join(dir, "reg*.csv")
	ck := filepath.Join(dir, "run.ckpt")
	args := func(out string, extra ...string) []string {
		a := []string{"train", "-stream", "30", "-m", "6", "-m2", "4", "-epochs", "0", "-steps", "60", "-batch", "16",
			"-valid", "0.2", "-lr", "0.05", "-threads", "1", "-json", "-out", out}
		return append(append(a, extra...), glob)
	}
	full := filepath.Join(dir, "full.json")
	code, out, errOut := runCmd(t, args(full)...)
	if code != exitOK {
		t.Fatalf("uninterrupted run: exit %d: %s", code, errOut)
	}
	want, wantSum := modelParams(t, full), streamSummary(t, out)
	if wantSum.NValid < 20 || wantSum.NValid > 55 || wantSum.NTrain+wantSum.NValid != 180 || wantSum.Valid == nil ||
		wantSum.Valid.N != wantSum.NValid || wantSum.Valid.RMSE == nil || len(wantSum.History) < 6 || wantSum.History[0].ValidLL == nil {
		t.Fatalf("summary of a streamed run with -valid 0.2 of 180 rows: %s", out)
	}

	part := filepath.Join(dir, "part.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &cancelWriter{marker: "step 31/", cancel: cancel}
	var buf bytes.Buffer
	if code := run(ctx, args(part, "-checkpoint", ck), &buf, w); code != exitInterrupted {
		t.Fatalf("interrupted run: exit %d: %s", code, w.buf.String())
	}
	if s := streamSummary(t, buf.String()); !s.Interrupted || s.Steps != 31 {
		t.Fatalf("interrupted run's summary %+v", s)
	}
	if code, _, errOut := runCmd(t, args(part, "-checkpoint", ck, "-stream", "31")...); code != exitError || !strings.Contains(errOut, "other training flags (-stream was 30, is 31)") {
		t.Fatalf("checkpoint with another shuffle buffer: exit %d: %s", code, errOut)
	}
	// Other data (a row added to one shard): refused, the checkpoint kept.
	extra := filepath.Join(dir, "reg4.csv")
	if err := os.WriteFile(extra, []byte("a,b,target\n1,2,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCmd(t, args(part, "-checkpoint", ck)...); code != exitError || !strings.Contains(errOut, "same training flags but other data") {
		t.Fatalf("checkpoint with other data: exit %d: %s", code, errOut)
	}
	os.Remove(extra)
	code, out, errOut = runCmd(t, args(part, "-checkpoint", ck)...)
	if code != exitOK || !strings.Contains(errOut, "resuming from "+ck+" after 31 steps") {
		t.Fatalf("resumed run: exit %d: %s", code, errOut)
	}
	got, gotSum := modelParams(t, part), streamSummary(t, out)
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("parameter %d: resumed %v, uninterrupted %v", i, got[i], want[i])
		}
	}
	if gotSum.Steps != wantSum.Steps || gotSum.NValid != wantSum.NValid || len(gotSum.History) != len(wantSum.History) ||
		*gotSum.Valid.RMSE != *wantSum.Valid.RMSE {
		t.Fatalf("resumed summary %+v, uninterrupted %+v", gotSum, wantSum)
	}
	for i, h := range gotSum.History {
		if *h.ValidLL != *wantSum.History[i].ValidLL || *h.Bound != *wantSum.History[i].Bound {
			t.Fatalf("history %d: resumed %+v, uninterrupted %+v", i, h, wantSum.History[i])
		}
	}
	if _, err := os.Stat(ck); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("checkpoint not removed after a finished run (%v)", err)
	}
}

func modelParams(t *testing.T, file string) []float64 {
	t.Helper()
	b, err := modelfile.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	p := make([]float64, b.Model.NumParams())
	b.Model.Params(p)
	return p
}

func streamSummary(t *testing.T, s string) trainSummary {
	t.Helper()
	var sum trainSummary
	if err := json.Unmarshal([]byte(s), &sum); err != nil {
		t.Fatalf("summary %q: %v", s, err)
	}
	return sum
}

// TestStreamEvaluateMatchesMemory checks that the validation metrics
// computed batch by batch over shards equal those of evaluate on the same
// rows in memory, to rounding, across several batches (more rows than
// boundBatch).
func TestStreamEvaluateMatchesMemory(t *testing.T) {
	dir := t.TempDir()
	path := writeRegression(t, dir, 60, 4)
	model := filepath.Join(dir, "m.json")
	if code, _, errOut := runCmd(t, "train", "-quiet", "-m", "5", "-m2", "3", "-epochs", "3", "-threads", "1", "-out", model, path); code != exitOK {
		t.Fatalf("train: exit %d: %s", code, errOut)
	}
	b, err := modelfile.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	n := 2*boundBatch + 123
	x := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := range y {
		a, c := 6*rng.Float64()-3, 6*rng.Float64()-3
		x.Set(i, 0, a)
		x.Set(i, 1, c)
		y[i] = 10 + 3*math.Sin(a) + c + 0.3*rng.NormFloat64()
	}
	want, err := evaluate(b, x, y, false)
	if err != nil {
		t.Fatal(err)
	}
	var shards []data.Shard
	for lo := 0; lo < n; lo += 3000 {
		hi := min(n, lo+3000)
		sh, err := data.MemoryShard("m", x.Slice(lo, hi, 0, 2).(*mat.Dense), y[lo:hi])
		if err != nil {
			t.Fatal(err)
		}
		shards = append(shards, sh)
	}
	got, err := streamEvaluate(b, shards)
	if err != nil {
		t.Fatal(err)
	}
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }
	if got.N != n || !close(got.LogLik, want.LogLik) || !close(*got.RMSE, *want.RMSE) || !close(*got.RMSEStd, *want.RMSEStd) ||
		!close(*got.LogLikStd, *want.LogLikStd) {
		t.Errorf("streamed metrics %+v (rmse %v), in memory %+v (rmse %v)", got, *got.RMSE, want, *want.RMSE)
	}
}
