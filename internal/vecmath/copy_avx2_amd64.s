//go:build !purego && !noasm

#include "textflag.h"

// AVX2 copy kernels for strided blocks of contiguous float64 runs.
//
// Go signatures (copy_amd64.go):
//
//	func copyBlockAVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)         // any run
//	func copyBlockAddAVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)      // any run, +=
//	func copyBlockTinyAVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)     // 2 <= run <= 4
//	func copyBlockShortAVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)    // 4 <= run <= 8
//	func copyBlockMediumAVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)   // 8 <= run <= 16
//	func copyBlockAddShortAVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int) // 1 <= run <= 7, +=
//	func copyStreamAVX2(dst, src *float64, n int)                                              // non-temporal copy
//
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

// func copyBlockAVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)
TEXT ·copyBlockAVX2(SB), NOSPLIT, $0-96
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ run+16(FP), BX
	MOVQ BX, CX
	MOVQ BX, DX
	ANDQ $-16, BX
	ANDQ $-4, CX
	ANDQ $3, DX
	MOVQ n2+40(FP), R11
	MOVQ s0+48(FP), R12
	MOVQ s1+56(FP), R13
	MOVQ d0+72(FP), R14
	MOVQ d1+80(FP), R15

level2:
	MOVQ n1+32(FP), R10

level1:
	MOVQ n0+24(FP), R9

level0:
	XORQ AX, AX
	CMPQ BX, $0
	JEQ  chunk4

chunk16:
	VMOVUPD (SI)(AX*8), Y0
	VMOVUPD 32(SI)(AX*8), Y1
	VMOVUPD 64(SI)(AX*8), Y2
	VMOVUPD 96(SI)(AX*8), Y3
	VMOVUPD Y0, (DI)(AX*8)
	VMOVUPD Y1, 32(DI)(AX*8)
	VMOVUPD Y2, 64(DI)(AX*8)
	VMOVUPD Y3, 96(DI)(AX*8)
	ADDQ    $16, AX
	CMPQ    AX, BX
	JLT     chunk16

chunk4:
	CMPQ    AX, CX
	JGE     tail2
	VMOVUPD (SI)(AX*8), Y0
	VMOVUPD Y0, (DI)(AX*8)
	ADDQ    $4, AX
	JMP     chunk4

tail2:
	TESTQ   $2, DX
	JEQ     tail1
	VMOVUPD (SI)(AX*8), X0
	VMOVUPD X0, (DI)(AX*8)
	ADDQ    $2, AX

tail1:
	TESTQ  $1, DX
	JEQ    next
	VMOVSD (SI)(AX*8), X0
	VMOVSD X0, (DI)(AX*8)

next:
	ADDQ R12, SI
	ADDQ R14, DI
	DECQ R9
	JNZ  level0
	ADDQ R13, SI
	ADDQ R15, DI
	DECQ R10
	JNZ  level1
	ADDQ s2+64(FP), SI
	ADDQ d2+88(FP), DI
	DECQ R11
	JNZ  level2

	VZEROUPPER
	RET

// func copyBlockAddAVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)
//
// dst[i] += src[i] per element: one VADDPD/VADDSD each, no FMA, so the result
// is bit-identical to the pure-Go loop.
TEXT ·copyBlockAddAVX2(SB), NOSPLIT, $0-96
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ run+16(FP), BX
	MOVQ BX, CX
	MOVQ BX, DX
	ANDQ $-16, BX
	ANDQ $-4, CX
	ANDQ $3, DX
	MOVQ n2+40(FP), R11
	MOVQ s0+48(FP), R12
	MOVQ s1+56(FP), R13
	MOVQ d0+72(FP), R14
	MOVQ d1+80(FP), R15

addLevel2:
	MOVQ n1+32(FP), R10

addLevel1:
	MOVQ n0+24(FP), R9

addLevel0:
	XORQ AX, AX
	CMPQ BX, $0
	JEQ  addChunk4

addChunk16:
	VMOVUPD (DI)(AX*8), Y0
	VMOVUPD 32(DI)(AX*8), Y1
	VMOVUPD 64(DI)(AX*8), Y2
	VMOVUPD 96(DI)(AX*8), Y3
	VADDPD  (SI)(AX*8), Y0, Y0
	VADDPD  32(SI)(AX*8), Y1, Y1
	VADDPD  64(SI)(AX*8), Y2, Y2
	VADDPD  96(SI)(AX*8), Y3, Y3
	VMOVUPD Y0, (DI)(AX*8)
	VMOVUPD Y1, 32(DI)(AX*8)
	VMOVUPD Y2, 64(DI)(AX*8)
	VMOVUPD Y3, 96(DI)(AX*8)
	ADDQ    $16, AX
	CMPQ    AX, BX
	JLT     addChunk16

addChunk4:
	CMPQ    AX, CX
	JGE     addTail2
	VMOVUPD (DI)(AX*8), Y0
	VADDPD  (SI)(AX*8), Y0, Y0
	VMOVUPD Y0, (DI)(AX*8)
	ADDQ    $4, AX
	JMP     addChunk4

addTail2:
	TESTQ   $2, DX
	JEQ     addTail1
	VMOVUPD (DI)(AX*8), X0
	VADDPD  (SI)(AX*8), X0, X0
	VMOVUPD X0, (DI)(AX*8)
	ADDQ    $2, AX

addTail1:
	TESTQ  $1, DX
	JEQ    addNext
	VMOVSD (DI)(AX*8), X0
	VADDSD (SI)(AX*8), X0, X0
	VMOVSD X0, (DI)(AX*8)

addNext:
	ADDQ R12, SI
	ADDQ R14, DI
	DECQ R9
	JNZ  addLevel0
	ADDQ R13, SI
	ADDQ R15, DI
	DECQ R10
	JNZ  addLevel1
	ADDQ s2+64(FP), SI
	ADDQ d2+88(FP), DI
	DECQ R11
	JNZ  addLevel2

	VZEROUPPER
	RET

// func copyBlockShortAVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)
//
// Copy kernel for 4 <= run <= 8 (patch rows of 5x5 single-channel patches,
// 3x3 RGB patches): each run is two overlapping 4-element copies, of
// elements [0, 4) and [run-4, run), with no per-run branches. The overlap
// rewrites values already written, so this is only valid for copies, not
// accumulation.
//
// Register map: SI/DI source/destination run pointers; CX (run-4)*8, the
// byte offset of the second copy; R8 n0, BX n1; R9, R10, R11 level
// countdowns; R12 s0, R13 s1, R14 d0, R15 d1 (s2, d2 from the frame);
// Y0, Y1 data.
TEXT ·copyBlockShortAVX2(SB), NOSPLIT, $0-96
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ run+16(FP), CX
	SUBQ $4, CX
	SHLQ $3, CX
	MOVQ n0+24(FP), R8
	MOVQ n1+32(FP), BX
	MOVQ n2+40(FP), R11
	MOVQ s0+48(FP), R12
	MOVQ s1+56(FP), R13
	MOVQ d0+72(FP), R14
	MOVQ d1+80(FP), R15

shortLevel2:
	MOVQ BX, R10

shortLevel1:
	MOVQ R8, R9

shortLevel0:
	VMOVUPD (SI), Y0
	VMOVUPD (SI)(CX*1), Y1
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, (DI)(CX*1)
	ADDQ    R12, SI
	ADDQ    R14, DI
	DECQ    R9
	JNZ     shortLevel0
	ADDQ    R13, SI
	ADDQ    R15, DI
	DECQ    R10
	JNZ     shortLevel1
	ADDQ    s2+64(FP), SI
	ADDQ    d2+88(FP), DI
	DECQ    R11
	JNZ     shortLevel2

	VZEROUPPER
	RET

// func copyBlockTinyAVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)
//
// Copy kernel for 2 <= run <= 4 (3x3 single-channel patch rows): two
// overlapping 2-element copies, of elements [0, 2) and [run-2, run).
// Registers as for copyBlockShortAVX2, with CX = (run-2)*8 and X0, X1 data.
TEXT ·copyBlockTinyAVX2(SB), NOSPLIT, $0-96
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ run+16(FP), CX
	SUBQ $2, CX
	SHLQ $3, CX
	MOVQ n0+24(FP), R8
	MOVQ n1+32(FP), BX
	MOVQ n2+40(FP), R11
	MOVQ s0+48(FP), R12
	MOVQ s1+56(FP), R13
	MOVQ d0+72(FP), R14
	MOVQ d1+80(FP), R15

tinyLevel2:
	MOVQ BX, R10

tinyLevel1:
	MOVQ R8, R9

tinyLevel0:
	VMOVUPD (SI), X0
	VMOVUPD (SI)(CX*1), X1
	VMOVUPD X0, (DI)
	VMOVUPD X1, (DI)(CX*1)
	ADDQ    R12, SI
	ADDQ    R14, DI
	DECQ    R9
	JNZ     tinyLevel0
	ADDQ    R13, SI
	ADDQ    R15, DI
	DECQ    R10
	JNZ     tinyLevel1
	ADDQ    s2+64(FP), SI
	ADDQ    d2+88(FP), DI
	DECQ    R11
	JNZ     tinyLevel2

	VZEROUPPER
	RET

// func copyBlockMediumAVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)
//
// Copy kernel for 8 <= run <= 16 (3x3 and 5x5 RGB patch rows): each run is
// four 4-element copies, of elements [0, 8) and [run-8, run), which overlap
// for run < 16. Registers as for copyBlockShortAVX2, with CX = (run-8)*8 and
// Y0-Y3 data.
TEXT ·copyBlockMediumAVX2(SB), NOSPLIT, $0-96
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ run+16(FP), CX
	SUBQ $8, CX
	SHLQ $3, CX
	MOVQ n0+24(FP), R8
	MOVQ n1+32(FP), BX
	MOVQ n2+40(FP), R11
	MOVQ s0+48(FP), R12
	MOVQ s1+56(FP), R13
	MOVQ d0+72(FP), R14
	MOVQ d1+80(FP), R15

mediumLevel2:
	MOVQ BX, R10

mediumLevel1:
	MOVQ R8, R9

mediumLevel0:
	VMOVUPD (SI), Y0
	VMOVUPD 32(SI), Y1
	VMOVUPD (SI)(CX*1), Y2
	VMOVUPD 32(SI)(CX*1), Y3
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, (DI)(CX*1)
	VMOVUPD Y3, 32(DI)(CX*1)
	ADDQ    R12, SI
	ADDQ    R14, DI
	DECQ    R9
	JNZ     mediumLevel0
	ADDQ    R13, SI
	ADDQ    R15, DI
	DECQ    R10
	JNZ     mediumLevel1
	ADDQ    s2+64(FP), SI
	ADDQ    d2+88(FP), DI
	DECQ    R11
	JNZ     mediumLevel2

	VZEROUPPER
	RET

// func copyStreamAVX2(dst, src *float64, n int)
//
// Copies n float64 values with non-temporal (cache-bypassing) stores: a
// scalar head until dst is 32-byte aligned, then VMOVNTPD of 16 and 4
// elements, a scalar tail, and SFENCE so the stores are ordered before any
// later store (as Go's memmove does for large copies).
//
// Register map: DI dst, SI src, CX remaining count, Y0-Y3 data.
TEXT ·copyStreamAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX

streamHead:
	TESTQ  CX, CX
	JEQ    streamDone
	TESTQ  $31, DI
	JEQ    streamChunk16
	VMOVSD (SI), X0
	VMOVSD X0, (DI)
	ADDQ   $8, SI
	ADDQ   $8, DI
	DECQ   CX
	JMP    streamHead

streamChunk16:
	CMPQ     CX, $16
	JLT      streamChunk4
	VMOVUPD  (SI), Y0
	VMOVUPD  32(SI), Y1
	VMOVUPD  64(SI), Y2
	VMOVUPD  96(SI), Y3
	VMOVNTPD Y0, (DI)
	VMOVNTPD Y1, 32(DI)
	VMOVNTPD Y2, 64(DI)
	VMOVNTPD Y3, 96(DI)
	ADDQ     $128, SI
	ADDQ     $128, DI
	SUBQ     $16, CX
	JMP      streamChunk16

streamChunk4:
	CMPQ     CX, $4
	JLT      streamTail
	VMOVUPD  (SI), Y0
	VMOVNTPD Y0, (DI)
	ADDQ     $32, SI
	ADDQ     $32, DI
	SUBQ     $4, CX
	JMP      streamChunk4

streamTail:
	TESTQ  CX, CX
	JEQ    streamDone
	VMOVSD (SI), X0
	VMOVSD X0, (DI)
	ADDQ   $8, SI
	ADDQ   $8, DI
	DECQ   CX
	JMP    streamTail

streamDone:
	SFENCE
	VZEROUPPER
	RET

// func copyBlockAddShortAVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)
//
// Accumulation kernel for 1 <= run <= 7 (patch rows of 3x3 and 5x5
// single-channel patches): each run is at most one YMM, one XMM and one
// scalar VADDPD/VADDSD, selected by the bits of run (the same for every run,
// so the branches predict perfectly). Unlike masked 8-wide accesses, these
// touch only the run's own bytes, so a load never waits on an earlier store
// to neighbouring pixels.
//
// Register map: SI/DI source/destination run pointers; DX run; CX byte offset
// within the run; R8 n0, BX n1; R9, R10, R11 level countdowns; R12 s0, R13 s1,
// R14 d0, R15 d1 (s2, d2 from the frame); Y0 data.
TEXT ·copyBlockAddShortAVX2(SB), NOSPLIT, $0-96
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ run+16(FP), DX
	MOVQ n0+24(FP), R8
	MOVQ n1+32(FP), BX
	MOVQ n2+40(FP), R11
	MOVQ s0+48(FP), R12
	MOVQ s1+56(FP), R13
	MOVQ d0+72(FP), R14
	MOVQ d1+80(FP), R15

addShortLevel2:
	MOVQ BX, R10

addShortLevel1:
	MOVQ R8, R9

addShortLevel0:
	XORQ    CX, CX
	TESTQ   $4, DX
	JEQ     addShort2
	VMOVUPD (DI), Y0
	VADDPD  (SI), Y0, Y0
	VMOVUPD Y0, (DI)
	MOVQ    $32, CX

addShort2:
	TESTQ   $2, DX
	JEQ     addShort1
	VMOVUPD (DI)(CX*1), X0
	VADDPD  (SI)(CX*1), X0, X0
	VMOVUPD X0, (DI)(CX*1)
	ADDQ    $16, CX

addShort1:
	TESTQ  $1, DX
	JEQ    addShortNext
	VMOVSD (DI)(CX*1), X0
	VADDSD (SI)(CX*1), X0, X0
	VMOVSD X0, (DI)(CX*1)

addShortNext:
	ADDQ R12, SI
	ADDQ R14, DI
	DECQ R9
	JNZ  addShortLevel0
	ADDQ R13, SI
	ADDQ R15, DI
	DECQ R10
	JNZ  addShortLevel1
	ADDQ s2+64(FP), SI
	ADDQ d2+88(FP), DI
	DECQ R11
	JNZ  addShortLevel2

	VZEROUPPER
	RET
