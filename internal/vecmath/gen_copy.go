//go:build ignore

// gen_copy writes the amd64 block copy kernels of package vecmath:
//
//	copy_avx2_amd64.s    AVX2 block copies and accumulations, copyStreamAVX2
//	copy_avx512_amd64.s  AVX-512F block copies and accumulations
//	copy_slack_amd64.s   the slack copies of CopyBlockSlack, both ISAs
//
// Kernels of one shape differ between the instruction sets only in vector
// width, register names and how the tail of a run is moved (XMM and scalar
// pieces on AVX2, one K-masked access on AVX-512F), and between copy and
// accumulation only in whether a run is stored or added. Each shape is one
// function below, parameterized by those. The one kernel without a twin,
// copyTiled3AVX512 (copytiled_avx512_amd64.s), is written by hand. Run it
// with go generate (see doc.go).
package main

import (
	"fmt"
	"log"
	"os"
	"strings"
)

// isa is an instruction set's full-width vector registers and tail strategy.
type isa struct {
	name  string // kernel name suffix: AVX2 or AVX512
	reg   string // register prefix: Y or Z
	width int    // register width in bytes
	mask  bool   // run tails are one K-masked access, not XMM and scalar pieces
}

var (
	avx2   = isa{"AVX2", "Y", 32, false}
	avx512 = isa{"AVX512", "Z", 64, true}
)

// lanes is the number of float64 values in one register.
func (s isa) lanes() int { return s.width / 8 }

// op is what a kernel does with each run: store it into dst (copy) or add it
// to dst (accumulate, one VADDPD or VADDSD per element, so bit-identical to
// the Go loop dst[i] += src[i]).
type op int

const (
	store op = iota
	add
)

// blockSig is the Go signature of every block kernel.
const blockSig = "(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)"

func main() {
	files := []struct {
		name  string
		write func(*asm)
	}{
		{"copy_avx2_amd64.s", avx2File},
		{"copy_avx512_amd64.s", avx512File},
		{"copy_slack_amd64.s", slackFile},
	}
	for _, f := range files {
		var a asm
		f.write(&a)
		if err := os.WriteFile(f.name, a.bytes(), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// avx2File writes copy_avx2_amd64.s.
func avx2File(a *asm) {
	a.header(avx2Intro, []sig{
		{"copyBlockAVX2", blockSig, "any run"},
		{"copyBlockAddAVX2", blockSig, "any run, +="},
		{"copyBlockTinyAVX2", blockSig, "2 <= run <= 4"},
		{"copyBlockShortAVX2", blockSig, "4 <= run <= 8"},
		{"copyBlockMediumAVX2", blockSig, "8 <= run <= 16"},
		{"copyBlockAddShortAVX2", blockSig, "1 <= run <= 7, +="},
		{"copyStreamAVX2", "(dst, src *float64, n int)", "non-temporal copy"},
	}, avx2Outro)
	chunked(a, avx2, store, "")
	chunked(a, avx2, add, avx2AddDoc)
	overlapping(a, "copyBlockShortAVX2", "short", "Y", 32, 1, shortAVX2Doc)
	overlapping(a, "copyBlockTinyAVX2", "tiny", "X", 16, 1, tinyDoc)
	overlapping(a, "copyBlockMediumAVX2", "medium", "Y", 32, 2, mediumAVX2Doc)
	stream(a)
	addPieces(a)
}

// avx512File writes copy_avx512_amd64.s.
func avx512File(a *asm) {
	a.header(avx512Intro, []sig{
		{"copyBlockAVX512", blockSig, "any run"},
		{"copyBlockAddAVX512", blockSig, "any run, +="},
		{"copyBlockShortAVX512", blockSig, "1 <= run <= 8"},
		{"copyBlockMediumAVX512", blockSig, "8 <= run <= 16"},
	}, avx512Outro)
	chunked(a, avx512, store, "")
	chunked(a, avx512, add, avx512AddDoc)
	masked(a)
	overlapping(a, "copyBlockMediumAVX512", "medium", "Z", 64, 1, mediumAVX512Doc)
}

// slackVariants are the slack kernels: vecs full-width registers per run.
var slackVariants = []struct {
	s    isa
	vecs int
}{{avx2, 1}, {avx2, 2}, {avx2, 3}, {avx2, 4}, {avx512, 1}, {avx512, 2}}

// slackFile writes copy_slack_amd64.s.
func slackFile(a *asm) {
	var sigs []sig
	for _, v := range slackVariants {
		note := fmt.Sprintf("run <= %-3s %d %sMM", fmt.Sprint(v.vecs*v.s.lanes())+":", v.vecs, v.s.reg)
		sigs = append(sigs, sig{fmt.Sprintf("copySlack%d%s", v.vecs, v.s.name), blockSig, note})
	}
	a.header(slackIntro, sigs, slackOutro)
	for _, v := range slackVariants {
		slack(a, v.s, v.vecs)
	}
}

// chunked writes copyBlock{ISA} (o = store) or copyBlockAdd{ISA} (o = add)
// for runs of any length: chunks of four registers, then single registers,
// then the tail, which is an XMM piece and a scalar on AVX2 and one masked
// access on AVX-512F. Register map in the file's doc comment.
func chunked(a *asm, s isa, o op, doc string) {
	name, prefix := "copyBlock"+s.name, ""
	if o == add {
		name, prefix = "copyBlockAdd"+s.name, "add"
	}
	big, one := 4*s.lanes(), s.lanes()
	a.begin(name, doc)
	a.i("MOVQ dst+0(FP), DI")
	a.i("MOVQ src+8(FP), SI")
	a.i("MOVQ run+16(FP), BX") // BX = run &^ (big-1), CX = run &^ (one-1), DX = run & (one-1)
	if s.mask {
		a.i("MOVQ BX, DX")
		a.i("ANDQ $%d, DX", one-1)
		a.i("MOVQ DX, CX")
		a.runMask()
		a.i("MOVQ BX, CX")
	} else {
		a.i("MOVQ BX, CX")
		a.i("MOVQ BX, DX")
	}
	a.i("ANDQ $%d, BX", -big)
	a.i("ANDQ $%d, CX", -one)
	if !s.mask {
		a.i("ANDQ $%d, DX", one-1)
	}
	a.strides(false)
	next := label(prefix, "next")
	tail := label(prefix, "tail")
	if !s.mask {
		tail += "2"
	}
	bigLoop, oneLoop := label(prefix, fmt.Sprint("chunk", big)), label(prefix, fmt.Sprint("chunk", one))
	a.levels(prefix, false, next, func() {
		a.i("XORQ AX, AX")
		a.i("CMPQ BX, $0")
		a.i("JEQ %s", oneLoop)
		a.label(bigLoop)
		offs := []int{0, s.width, 2 * s.width, 3 * s.width}
		a.move(o, "VMOVUPD", regs(s.reg, 4), at("SI", "AX*8", offs...), at("DI", "AX*8", offs...))
		a.i("ADDQ $%d, AX", big)
		a.i("CMPQ AX, BX")
		a.i("JLT %s", bigLoop)
		a.label(oneLoop)
		a.i("CMPQ AX, CX")
		a.i("JGE %s", tail)
		a.move(o, "VMOVUPD", regs(s.reg, 1), at("SI", "AX*8", 0), at("DI", "AX*8", 0))
		a.i("ADDQ $%d, AX", one)
		a.i("JMP %s", oneLoop)
		a.label(tail)
		chunkTail(a, s, o, prefix, next)
	})
}

// chunkTail writes the tail of a chunked kernel's run, the DX = run mod
// lanes elements at index AX: one masked access on AVX-512F; on AVX2 an XMM
// piece (bit 1 of DX) and a scalar (bit 0). It goes on to label next.
func chunkTail(a *asm, s isa, o op, prefix, next string) {
	if s.mask {
		a.i("TESTQ DX, DX")
		a.i("JEQ %s", next)
		a.maskedMove(o, "(SI)(AX*8)", "(DI)(AX*8)")
		return
	}
	tail1 := label(prefix, "tail1")
	a.i("TESTQ $2, DX")
	a.i("JEQ %s", tail1)
	a.move(o, "VMOVUPD", []string{"X0"}, at("SI", "AX*8", 0), at("DI", "AX*8", 0))
	a.i("ADDQ $2, AX")
	a.label(tail1)
	a.i("TESTQ $1, DX")
	a.i("JEQ %s", next)
	a.move(o, "VMOVSD", []string{"X0"}, at("SI", "AX*8", 0), at("DI", "AX*8", 0))
}

// overlapping writes a copy kernel for runs of h to 2h elements, where h is
// vecs registers reg of width bytes: each run is two copies of h elements,
// of [0, h) and [run-h, run), with no per-run branches. CX holds the byte
// offset (run-h)*8 of the second copy. The overlap rewrites values already
// written, so there is no accumulating twin.
func overlapping(a *asm, name, prefix, reg string, width, vecs int, doc string) {
	a.begin(name, doc)
	a.i("MOVQ dst+0(FP), DI")
	a.i("MOVQ src+8(FP), SI")
	a.i("MOVQ run+16(FP), CX")
	a.i("SUBQ $%d, CX", vecs*width/8)
	a.i("SHLQ $3, CX")
	a.strides(true)
	a.levels(prefix, true, "", func() {
		var offs []int
		for i := 0; i < vecs; i++ {
			offs = append(offs, i*width)
		}
		src := append(at("SI", "", offs...), at("SI", "CX*1", offs...)...)
		dst := append(at("DI", "", offs...), at("DI", "CX*1", offs...)...)
		a.move(store, "VMOVUPD", regs(reg, 2*vecs), src, dst)
	})
}

// masked writes copyBlockShortAVX512: runs of 1 to 8 elements, each one
// masked load and one masked store under K1, the run's lane mask.
func masked(a *asm) {
	a.begin("copyBlockShortAVX512", shortAVX512Doc)
	a.i("MOVQ dst+0(FP), DI")
	a.i("MOVQ src+8(FP), SI")
	a.i("MOVQ run+16(FP), CX")
	a.runMask()
	a.strides(true)
	a.levels("short", true, "", func() {
		a.maskedMove(store, "(SI)", "(DI)")
	})
}

// addPieces writes copyBlockAddShortAVX2: runs of 1 to 7 elements, each at
// most a YMM, an XMM and a scalar accumulation, chosen by the bits of run
// (DX). CX is the byte offset of the next piece.
func addPieces(a *asm) {
	a.begin("copyBlockAddShortAVX2", addShortAVX2Doc)
	a.i("MOVQ dst+0(FP), DI")
	a.i("MOVQ src+8(FP), SI")
	a.i("MOVQ run+16(FP), DX")
	a.strides(true)
	a.levels("addShort", true, "addShortNext", func() {
		a.i("XORQ CX, CX")
		a.i("TESTQ $4, DX")
		a.i("JEQ addShort2")
		a.move(add, "VMOVUPD", []string{"Y0"}, []string{"(SI)"}, []string{"(DI)"})
		a.i("MOVQ $32, CX")
		a.label("addShort2")
		a.i("TESTQ $2, DX")
		a.i("JEQ addShort1")
		a.move(add, "VMOVUPD", []string{"X0"}, at("SI", "CX*1", 0), at("DI", "CX*1", 0))
		a.i("ADDQ $16, CX")
		a.label("addShort1")
		a.i("TESTQ $1, DX")
		a.i("JEQ addShortNext")
		a.move(add, "VMOVSD", []string{"X0"}, at("SI", "CX*1", 0), at("DI", "CX*1", 0))
	})
}

// slack writes copySlack{vecs}{ISA}: each run moved by vecs full-width
// loads and stores, with no tail handling (see the file's doc comment).
func slack(a *asm, s isa, vecs int) {
	a.begin(fmt.Sprintf("copySlack%d%s", vecs, s.name), "")
	a.i("MOVQ dst+0(FP), DI")
	a.i("MOVQ src+8(FP), SI")
	a.strides(true)
	a.levels("", true, "", func() {
		var offs []int
		for i := 0; i < vecs; i++ {
			offs = append(offs, i*s.width)
		}
		a.move(store, "VMOVUPD", regs(s.reg, vecs), at("SI", "", offs...), at("DI", "", offs...))
	})
}

// stream writes copyStreamAVX2, the non-temporal copy of one contiguous
// span: a scalar head up to 32-byte alignment of dst, VMOVNTPD stores of
// four and one YMM, a scalar tail and SFENCE.
func stream(a *asm) {
	a.text("\n// func copyStreamAVX2(dst, src *float64, n int)\n//\n" + strings.TrimSuffix(streamDoc, "\n"))
	a.text("TEXT ·copyStreamAVX2(SB), NOSPLIT, $0-24")
	a.i("MOVQ dst+0(FP), DI")
	a.i("MOVQ src+8(FP), SI")
	a.i("MOVQ n+16(FP), CX")
	// scalar is a loop moving one value per iteration until CX is 0 or,
	// if aligned is not "", until dst is 32-byte aligned (then on to aligned).
	scalar := func(loop, aligned string) {
		a.label(loop)
		a.i("TESTQ CX, CX")
		a.i("JEQ streamDone")
		if aligned != "" {
			a.i("TESTQ $31, DI")
			a.i("JEQ %s", aligned)
		}
		a.move(store, "VMOVSD", []string{"X0"}, []string{"(SI)"}, []string{"(DI)"})
		a.i("ADDQ $8, SI")
		a.i("ADDQ $8, DI")
		a.i("DECQ CX")
		a.i("JMP %s", loop)
	}
	// chunk is a loop moving vecs YMM per iteration while CX allows,
	// then on to next.
	chunk := func(loop, next string, vecs int) {
		a.label(loop)
		a.i("CMPQ CX, $%d", 4*vecs)
		a.i("JLT %s", next)
		offs := []int{0, 32, 64, 96}[:vecs]
		a.move(store, "VMOVUPD", regs("Y", vecs), at("SI", "", offs...), nil)
		for i, d := range at("DI", "", offs...) {
			a.i("VMOVNTPD Y%d, %s", i, d)
		}
		a.i("ADDQ $%d, SI", 32*vecs)
		a.i("ADDQ $%d, DI", 32*vecs)
		a.i("SUBQ $%d, CX", 4*vecs)
		a.i("JMP %s", loop)
	}
	scalar("streamHead", "streamChunk16")
	chunk("streamChunk16", "streamChunk4", 4)
	chunk("streamChunk4", "streamTail", 1)
	scalar("streamTail", "")
	a.label("streamDone")
	a.i("SFENCE")
	a.i("VZEROUPPER")
	a.i("RET")
}

// asm collects the lines of one assembly file.
type asm struct{ lines []string }

// sig is one kernel's entry in a file's list of Go signatures.
type sig struct{ name, params, note string }

// text appends comment or directive lines as they are.
func (a *asm) text(s string) { a.lines = append(a.lines, strings.Split(s, "\n")...) }

// i appends one instruction.
func (a *asm) i(format string, args ...any) {
	a.lines = append(a.lines, "\t"+fmt.Sprintf(format, args...))
}

// label appends a label after a blank line.
func (a *asm) label(l string) { a.lines = append(a.lines, "", l+":") }

// header writes the generated-code line, build constraint and include, and
// the file's doc comment: intro, the Go signatures with their notes in one
// column, then outro.
func (a *asm) header(intro string, sigs []sig, outro string) {
	a.text(fmt.Sprintf("// Code generated by %s; DO NOT EDIT.\n", "gen_copy.go"))
	a.text("//go:build !purego && !noasm\n\n#include \"textflag.h\"\n")
	a.text(strings.TrimSuffix(intro, "\n"))
	col := 0
	for _, s := range sigs {
		col = max(col, len(s.name+s.params))
	}
	for _, s := range sigs {
		pad := strings.Repeat(" ", col-len(s.name+s.params))
		a.text(fmt.Sprintf("//\tfunc %s%s%s // %s", s.name, s.params, pad, s.note))
	}
	a.text(strings.TrimSuffix(outro, "\n"))
}

// begin starts a block kernel: its signature, doc (comment lines, may be
// empty) and TEXT line.
func (a *asm) begin(name, doc string) {
	a.text("\n// func " + name + blockSig)
	if doc != "" {
		a.text("//\n" + strings.TrimSuffix(doc, "\n"))
	}
	a.text("TEXT ·" + name + "(SB), NOSPLIT, $0-96")
}

// strides loads the level counts and carry strides that stay in registers:
// n2 into R11, s0, s1, d0, d1 into R12-R15 and, if counts, n0 and n1 into R8
// and BX (the chunked kernels need R8 and BX otherwise and reload the counts
// from the frame).
func (a *asm) strides(counts bool) {
	if counts {
		a.i("MOVQ n0+24(FP), R8")
		a.i("MOVQ n1+32(FP), BX")
	}
	a.i("MOVQ n2+40(FP), R11")
	a.i("MOVQ s0+48(FP), R12")
	a.i("MOVQ s1+56(FP), R13")
	a.i("MOVQ d0+72(FP), R14")
	a.i("MOVQ d1+80(FP), R15")
}

// levels writes the three nested countdown loops (R9, R10, R11) of a block
// kernel around body, which moves the run at SI to DI. The level counts are
// reloaded from R8 and BX if counts (see strides), else from the frame.
// body's branches past the end of the run go to label next, if not "".
func (a *asm) levels(prefix string, counts bool, next string, body func()) {
	l2, l1, l0 := label(prefix, "level2"), label(prefix, "level1"), label(prefix, "level0")
	a.label(l2)
	if counts {
		a.i("MOVQ BX, R10")
	} else {
		a.i("MOVQ n1+32(FP), R10")
	}
	a.label(l1)
	if counts {
		a.i("MOVQ R8, R9")
	} else {
		a.i("MOVQ n0+24(FP), R9")
	}
	a.label(l0)
	body()
	if next != "" {
		a.label(next)
	}
	for _, c := range []struct{ s, d, count, loop string }{
		{"R12", "R14", "R9", l0}, {"R13", "R15", "R10", l1}, {"s2+64(FP)", "d2+88(FP)", "R11", l2},
	} {
		a.i("ADDQ %s, SI", c.s)
		a.i("ADDQ %s, DI", c.d)
		a.i("DECQ %s", c.count)
		a.i("JNZ %s", c.loop)
	}
	a.lines = append(a.lines, "")
	a.i("VZEROUPPER")
	a.i("RET")
}

// runMask sets K1 to the lane mask (1<<CX)-1 of a run of CX elements,
// clobbering AX.
func (a *asm) runMask() {
	a.i("MOVL $1, AX")
	a.i("SHLL CX, AX")
	a.i("DECL AX")
	a.i("KMOVW AX, K1")
}

// move moves the vectors at src to dst through the registers r, mov being
// VMOVUPD (full registers) or VMOVSD (one scalar): all loads, then for add
// the additions, then all stores (none if dst is nil). For add, dst is
// loaded and src is the memory operand of VADDPD or VADDSD.
func (a *asm) move(o op, mov string, r, src, dst []string) {
	if o == store {
		for i := range r {
			a.i("%s %s, %s", mov, src[i], r[i])
		}
	} else {
		addIns := map[string]string{"VMOVUPD": "VADDPD", "VMOVSD": "VADDSD"}[mov]
		for i := range r {
			a.i("%s %s, %s", mov, dst[i], r[i])
		}
		for i := range r {
			a.i("%s %s, %s, %s", addIns, src[i], r[i], r[i])
		}
	}
	for i := range dst {
		a.i("%s %s, %s", mov, r[i], dst[i])
	}
}

// maskedMove moves the lanes of K1 from src to dst through Z0 (and Z1 for
// add); masked-off lanes are neither loaded (faults suppressed) nor stored.
func (a *asm) maskedMove(o op, src, dst string) {
	if o == store {
		a.i("VMOVUPD.Z %s, K1, Z0", src)
	} else {
		a.i("VMOVUPD.Z %s, K1, Z0", dst)
		a.i("VMOVUPD.Z %s, K1, Z1", src)
		a.i("VADDPD Z1, Z0, Z0")
	}
	a.i("VMOVUPD Z0, K1, %s", dst)
}

// bytes returns the file, each block of consecutive instructions aligned on
// its operands as asmfmt aligns them.
func (a *asm) bytes() []byte {
	var b strings.Builder
	for i := 0; i < len(a.lines); {
		j := i
		width := 0
		for ; j < len(a.lines) && strings.HasPrefix(a.lines[j], "\t"); j++ {
			mn, _, _ := strings.Cut(a.lines[j][1:], " ")
			width = max(width, len(mn))
		}
		if j == i {
			b.WriteString(a.lines[i] + "\n")
			i++
			continue
		}
		for ; i < j; i++ {
			mn, ops, ok := strings.Cut(a.lines[i][1:], " ")
			if ok {
				mn += strings.Repeat(" ", width+1-len(mn)) + ops
			}
			b.WriteString("\t" + mn + "\n")
		}
	}
	return []byte(b.String())
}

// label is name prefixed by prefix (and capitalized after it), so that the
// labels of the kernels in one file stay distinct.
func label(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + strings.ToUpper(name[:1]) + name[1:]
}

// regs is the registers prefix0 .. prefix(n-1).
func regs(prefix string, n int) []string {
	var r []string
	for i := 0; i < n; i++ {
		r = append(r, fmt.Sprintf("%s%d", prefix, i))
	}
	return r
}

// at is the memory operands at byte offsets offs from base, indexed by
// index (as "AX*8") if not "".
func at(base, index string, offs ...int) []string {
	var m []string
	for _, off := range offs {
		s := "(" + base + ")"
		if off != 0 {
			s = fmt.Sprint(off) + s
		}
		if index != "" {
			s += "(" + index + ")"
		}
		m = append(m, s)
	}
	return m
}

// The doc comments of the files and kernels.
const (
	avx2Intro = `// AVX2 copy kernels for strided blocks of contiguous float64 runs.
//
// Go signatures (copy_amd64.go):
//
`

	avx2Outro = `//
// For the block kernels, run is the run length in elements; n0, n1, n2 (all >= 1) the run counts of
// the three levels, innermost first; s0..s2 and d0..d2 the source and
// destination carry strides in bytes (s0 = stride between runs, s1 and s2 the
// extra step after a level completes; see copyCarry).
//
// Register map of copyBlockAVX2 and copyBlockAddAVX2 (the others document
// theirs):
//
//	SI  source pointer (start of the current run)
//	DI  destination pointer (start of the current run)
//	AX  element index within the run
//	BX  run &^ 15: end of the 16-element (4 x YMM) chunks
//	CX  run &^ 3:  end of the 4-element (1 x YMM) chunks
//	DX  run & 3:   tail (bit 1: two elements in an XMM, bit 0: one scalar)
//	R9  level-0 countdown, R10 level-1 countdown, R11 level-2 countdown
//	R12 s0, R13 s1, R14 d0, R15 d1 (s2 and d2 are read from the frame)
//	Y0-Y3 data
`

	avx512Intro = `// AVX-512F copy kernels for strided blocks of contiguous float64 runs.
//
// Go signatures (copy_amd64.go):
//
`

	avx512Outro = `//
// Arguments as for the AVX2 kernels (copy_avx2_amd64.s): run length in
// elements, level counts n0..n2 (all >= 1, innermost first), source and
// destination carry strides in bytes. The run tail (run mod 8 elements) is a
// single masked load and store, so runs shorter than a vector (3x3 and 5x5
// single-channel patch rows) cost one load and one store each.
//
// Register map of copyBlockAVX512 and copyBlockAddAVX512 (the others document
// theirs):
//
//	SI  source pointer (start of the current run)
//	DI  destination pointer (start of the current run)
//	AX  element index within the run
//	BX  run &^ 31: end of the 32-element (4 x ZMM) chunks
//	CX  run &^ 7:  end of the 8-element (1 x ZMM) chunks
//	DX  run & 7:   tail length; K1 = (1<<DX)-1 its lane mask
//	R9  level-0 countdown, R10 level-1 countdown, R11 level-2 countdown
//	R12 s0, R13 s1, R14 d0, R15 d1 (s2 and d2 are read from the frame)
//	Z0-Z3 data
`

	avx2AddDoc = `// dst[i] += src[i] per element: one VADDPD/VADDSD each, no FMA, so the result
// is bit-identical to the pure-Go loop.
`

	shortAVX2Doc = `// Copy kernel for 4 <= run <= 8 (patch rows of 5x5 single-channel patches,
// 3x3 RGB patches): each run is two overlapping 4-element copies, of
// elements [0, 4) and [run-4, run), with no per-run branches. The overlap
// rewrites values already written, so this is only valid for copies, not
// accumulation.
//
// Register map: SI/DI source/destination run pointers; CX (run-4)*8, the
// byte offset of the second copy; R8 n0, BX n1; R9, R10, R11 level
// countdowns; R12 s0, R13 s1, R14 d0, R15 d1 (s2, d2 from the frame);
// Y0, Y1 data.
`

	tinyDoc = `// Copy kernel for 2 <= run <= 4 (3x3 single-channel patch rows): two
// overlapping 2-element copies, of elements [0, 2) and [run-2, run).
// Registers as for copyBlockShortAVX2, with CX = (run-2)*8 and X0, X1 data.
`

	mediumAVX2Doc = `// Copy kernel for 8 <= run <= 16 (3x3 and 5x5 RGB patch rows): each run is
// four 4-element copies, of elements [0, 8) and [run-8, run), which overlap
// for run < 16. Registers as for copyBlockShortAVX2, with CX = (run-8)*8 and
// Y0-Y3 data.
`

	streamDoc = `// Copies n float64 values with non-temporal (cache-bypassing) stores: a
// scalar head until dst is 32-byte aligned, then VMOVNTPD of 16 and 4
// elements, a scalar tail, and SFENCE so the stores are ordered before any
// later store (as Go's memmove does for large copies).
//
// Register map: DI dst, SI src, CX remaining count, Y0-Y3 data.
`

	addShortAVX2Doc = `// Accumulation kernel for 1 <= run <= 7 (patch rows of 3x3 and 5x5
// single-channel patches): each run is at most one YMM, one XMM and one
// scalar VADDPD/VADDSD, selected by the bits of run (the same for every run,
// so the branches predict perfectly). Unlike masked 8-wide accesses, these
// touch only the run's own bytes, so a load never waits on an earlier store
// to neighbouring pixels.
//
// Register map: SI/DI source/destination run pointers; DX run; CX byte offset
// within the run; R8 n0, BX n1; R9, R10, R11 level countdowns; R12 s0, R13 s1,
// R14 d0, R15 d1 (s2, d2 from the frame); Y0 data.
`

	avx512AddDoc = `// dst[i] += src[i] per element with VADDPD (no FMA): bit-identical to the
// pure-Go loop. Masked-off lanes are neither loaded (faults suppressed) nor
// stored.
`

	shortAVX512Doc = `// Copy kernel for 1 <= run <= 8 (patch rows of 3x3 and 5x5 single-channel
// patches): each run is one masked load and one masked store, with no
// per-run chunk loop.
//
// Register map: SI/DI source/destination run pointers; K1 lane mask of the
// run; R8 n0, BX n1; R9, R10, R11 level countdowns; R12 s0, R13 s1, R14 d0,
// R15 d1 (s2, d2 from the frame); Z0 data.
`

	mediumAVX512Doc = `// Copy kernel for 8 <= run <= 16 (3x3 and 5x5 RGB patch rows): each run is
// two 8-element copies, of elements [0, 8) and [run-8, run), which overlap
// for run < 16; no masks. Registers as for copyBlockShortAVX512, with
// CX = (run-8)*8 and Z0, Z1 data.
`

	slackIntro = `// Slack copy kernels (CopyBlockSlack) for strided blocks of short float64
// runs whose destinations come in increasing order in dst. Each run is moved
// with a fixed number of full-width vector loads and stores, v elements with
// v >= run, and no tail handling: the v-run values stored past the end of a
// run land in the gap before the next run or are overwritten by the next
// run (which starts at or after the end of this one), and past the last run
// they land in the caller's slack. The loads likewise read up to v-run
// elements past each source run.
//
// Go signatures (copy_amd64.go), arguments as for copyBlockAVX2 (run is
// unused; the kernel's width bounds it):
//
`

	slackOutro = `//
// Register map: SI/DI source/destination run pointers; R8 n0, BX n1; R9,
// R10, R11 level countdowns; R12 s0, R13 s1, R14 d0, R15 d1 (s2, d2 from the
// frame); Y0-Y3 or Z0-Z1 data.
`
)
