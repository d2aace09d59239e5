package main

import "testing"

// TestFingerprintMismatch checks the error for a checkpoint of another
// run: it names the changed flags, says it is the data when no flag
// changed, and falls back to the general message for a checkpoint that
// does not record its flags.
func TestFingerprintMismatch(t *testing.T) {
	saved := []string{"batch=64", "lr=0.05", "m=10"}
	for _, tc := range []struct {
		saved, now []string
		want       string
	}{
		{saved, []string{"batch=32", "lr=0.05", "m=10", "seed=2"},
			"ck: the checkpoint comes from a run with other training flags (-batch was 64, is 32; -seed is new (2)); give the flags it was run with, or remove it to start afresh"},
		{[]string{"init=greedy", "m=10"}, []string{"m=10"},
			"ck: the checkpoint comes from a run with other training flags (-init was greedy, is its default); give the flags it was run with, or remove it to start afresh"},
		{saved, saved, "ck: the checkpoint comes from a run with the same training flags but other data; remove it to start afresh"},
		{nil, saved, "ck: the checkpoint comes from a run with other data or training flags; remove it to start afresh"},
	} {
		if got := fingerprintMismatch("ck", tc.saved, tc.now).Error(); got != tc.want {
			t.Errorf("%v → %v:\n%q, want\n%q", tc.saved, tc.now, got, tc.want)
		}
	}
}
