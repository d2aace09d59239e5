//go:build !purego && !noasm

#include "textflag.h"

// AVX-512F copy kernels for strided blocks of contiguous float64 runs.
//
// Go signatures (copy_amd64.go):
//
//	func copyBlockAVX512(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)       // any run
//	func copyBlockAddAVX512(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)    // any run, +=
//	func copyBlockShortAVX512(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)  // 1 <= run <= 8
//	func copyBlockMediumAVX512(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int) // 8 <= run <= 16
//
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

// func copyBlockAVX512(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)
TEXT ·copyBlockAVX512(SB), NOSPLIT, $0-96
	MOVQ  dst+0(FP), DI
	MOVQ  src+8(FP), SI
	MOVQ  run+16(FP), BX
	MOVQ  BX, DX
	ANDQ  $7, DX
	MOVQ  DX, CX
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	MOVQ  BX, CX
	ANDQ  $-32, BX
	ANDQ  $-8, CX
	MOVQ  n2+40(FP), R11
	MOVQ  s0+48(FP), R12
	MOVQ  s1+56(FP), R13
	MOVQ  d0+72(FP), R14
	MOVQ  d1+80(FP), R15

level2:
	MOVQ n1+32(FP), R10

level1:
	MOVQ n0+24(FP), R9

level0:
	XORQ AX, AX
	CMPQ BX, $0
	JEQ  chunk8

chunk32:
	VMOVUPD (SI)(AX*8), Z0
	VMOVUPD 64(SI)(AX*8), Z1
	VMOVUPD 128(SI)(AX*8), Z2
	VMOVUPD 192(SI)(AX*8), Z3
	VMOVUPD Z0, (DI)(AX*8)
	VMOVUPD Z1, 64(DI)(AX*8)
	VMOVUPD Z2, 128(DI)(AX*8)
	VMOVUPD Z3, 192(DI)(AX*8)
	ADDQ    $32, AX
	CMPQ    AX, BX
	JLT     chunk32

chunk8:
	CMPQ    AX, CX
	JGE     tail
	VMOVUPD (SI)(AX*8), Z0
	VMOVUPD Z0, (DI)(AX*8)
	ADDQ    $8, AX
	JMP     chunk8

tail:
	TESTQ     DX, DX
	JEQ       next
	VMOVUPD.Z (SI)(AX*8), K1, Z0
	VMOVUPD   Z0, K1, (DI)(AX*8)

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

// func copyBlockAddAVX512(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)
//
// dst[i] += src[i] per element with VADDPD (no FMA): bit-identical to the
// pure-Go loop. Masked-off lanes are neither loaded (faults suppressed) nor
// stored.
TEXT ·copyBlockAddAVX512(SB), NOSPLIT, $0-96
	MOVQ  dst+0(FP), DI
	MOVQ  src+8(FP), SI
	MOVQ  run+16(FP), BX
	MOVQ  BX, DX
	ANDQ  $7, DX
	MOVQ  DX, CX
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	MOVQ  BX, CX
	ANDQ  $-32, BX
	ANDQ  $-8, CX
	MOVQ  n2+40(FP), R11
	MOVQ  s0+48(FP), R12
	MOVQ  s1+56(FP), R13
	MOVQ  d0+72(FP), R14
	MOVQ  d1+80(FP), R15

addLevel2:
	MOVQ n1+32(FP), R10

addLevel1:
	MOVQ n0+24(FP), R9

addLevel0:
	XORQ AX, AX
	CMPQ BX, $0
	JEQ  addChunk8

addChunk32:
	VMOVUPD (DI)(AX*8), Z0
	VMOVUPD 64(DI)(AX*8), Z1
	VMOVUPD 128(DI)(AX*8), Z2
	VMOVUPD 192(DI)(AX*8), Z3
	VADDPD  (SI)(AX*8), Z0, Z0
	VADDPD  64(SI)(AX*8), Z1, Z1
	VADDPD  128(SI)(AX*8), Z2, Z2
	VADDPD  192(SI)(AX*8), Z3, Z3
	VMOVUPD Z0, (DI)(AX*8)
	VMOVUPD Z1, 64(DI)(AX*8)
	VMOVUPD Z2, 128(DI)(AX*8)
	VMOVUPD Z3, 192(DI)(AX*8)
	ADDQ    $32, AX
	CMPQ    AX, BX
	JLT     addChunk32

addChunk8:
	CMPQ    AX, CX
	JGE     addTail
	VMOVUPD (DI)(AX*8), Z0
	VADDPD  (SI)(AX*8), Z0, Z0
	VMOVUPD Z0, (DI)(AX*8)
	ADDQ    $8, AX
	JMP     addChunk8

addTail:
	TESTQ     DX, DX
	JEQ       addNext
	VMOVUPD.Z (DI)(AX*8), K1, Z0
	VMOVUPD.Z (SI)(AX*8), K1, Z1
	VADDPD    Z1, Z0, Z0
	VMOVUPD   Z0, K1, (DI)(AX*8)

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

// func copyBlockShortAVX512(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)
//
// Copy kernel for 1 <= run <= 8 (patch rows of 3x3 and 5x5 single-channel
// patches): each run is one masked load and one masked store, with no
// per-run chunk loop.
//
// Register map: SI/DI source/destination run pointers; K1 lane mask of the
// run; R8 n0, BX n1; R9, R10, R11 level countdowns; R12 s0, R13 s1, R14 d0,
// R15 d1 (s2, d2 from the frame); Z0 data.
TEXT ·copyBlockShortAVX512(SB), NOSPLIT, $0-96
	MOVQ  dst+0(FP), DI
	MOVQ  src+8(FP), SI
	MOVQ  run+16(FP), CX
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	MOVQ  n0+24(FP), R8
	MOVQ  n1+32(FP), BX
	MOVQ  n2+40(FP), R11
	MOVQ  s0+48(FP), R12
	MOVQ  s1+56(FP), R13
	MOVQ  d0+72(FP), R14
	MOVQ  d1+80(FP), R15

shortLevel2:
	MOVQ BX, R10

shortLevel1:
	MOVQ R8, R9

shortLevel0:
	VMOVUPD.Z (SI), K1, Z0
	VMOVUPD   Z0, K1, (DI)
	ADDQ      R12, SI
	ADDQ      R14, DI
	DECQ      R9
	JNZ       shortLevel0
	ADDQ      R13, SI
	ADDQ      R15, DI
	DECQ      R10
	JNZ       shortLevel1
	ADDQ      s2+64(FP), SI
	ADDQ      d2+88(FP), DI
	DECQ      R11
	JNZ       shortLevel2

	VZEROUPPER
	RET

// func copyBlockMediumAVX512(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)
//
// Copy kernel for 8 <= run <= 16 (3x3 and 5x5 RGB patch rows): each run is
// two 8-element copies, of elements [0, 8) and [run-8, run), which overlap
// for run < 16; no masks. Registers as for copyBlockShortAVX512, with
// CX = (run-8)*8 and Z0, Z1 data.
TEXT ·copyBlockMediumAVX512(SB), NOSPLIT, $0-96
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
	VMOVUPD (SI), Z0
	VMOVUPD (SI)(CX*1), Z1
	VMOVUPD Z0, (DI)
	VMOVUPD Z1, (DI)(CX*1)
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
