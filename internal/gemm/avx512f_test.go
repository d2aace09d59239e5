package gemm

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The AVX-512 backend is dispatched on AVX-512F alone (copy_amd64.go,
// dgemm_amd64.go), so its kernels may not use what only the AVX-512VL
// extension provides: EVEX instructions on XMM or YMM registers (masked
// operations, registers X16–X31 and Y16–Y31, EVEX-only instructions). A CPU
// with F but not VL would fault on them, and no test on a machine with VL
// would notice.
var (
	avx512Mask     = regexp.MustCompile(`\bK[1-7]\b`)
	avx512XY       = regexp.MustCompile(`\b[XY]([0-9]|[12][0-9]|3[01])\b`)
	avx512HighXY   = regexp.MustCompile(`\b[XY](1[6-9]|2[0-9]|3[01])\b`)
	avx512EVEXOnly = regexp.MustCompile(`^\s*(VPERMT2|VPERMI2|VMOVDQ[AU](32|64)|VBROADCASTF64X|VINSERTF64X|VEXTRACTF64X|VRNDSCALE|VSCALEF|VGETEXP|VFIXUPIMM)|\.BCST\b`)
	avx512Z        = regexp.MustCompile(`\bZ([0-9]|[12][0-9]|3[01])\b`)
)

// TestAVX512FoundationOnly scans the amd64 assembly (and its headers) for instructions that
// need AVX-512VL: a mask or an EVEX-only instruction on XMM/YMM operands
// without a ZMM operand, or any use of X16–X31 and Y16–Y31.
func TestAVX512FoundationOnly(t *testing.T) {
	files, err := filepath.Glob("*_amd64.s")
	headers, err2 := filepath.Glob("*_amd64.h")
	files = append(files, headers...)
	if err == nil {
		err = err2
	}
	if err != nil || len(files) == 0 {
		t.Fatalf("no amd64 assembly found (%v)", err)
	}
	for _, f := range files {
		buf, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(buf), "\n") {
			code, _, _ := strings.Cut(line, "//")
			code = strings.TrimSpace(code)
			if code == "" || strings.HasPrefix(code, "#") {
				continue
			}
			xy := avx512XY.MatchString(code) && !avx512Z.MatchString(code)
			switch {
			case avx512HighXY.MatchString(code),
				xy && avx512Mask.MatchString(code),
				xy && avx512EVEXOnly.MatchString(code):
				t.Errorf("%s:%d: needs AVX-512VL: %s", f, n+1, code)
			}
		}
	}
}
