//go:build !purego && !noasm

#include "textflag.h"

// copyTiled3AVX512: CopyBlockSlack for blocks of 3-element runs whose
// destination runs tile dst within each iteration of level 2 (each run
// starts where the previous one ends; level 2 may leave gaps), the patch rows
// of 3x3 single-channel image patches. The slack kernels' one 4-element
// store per run leaves three stores for every 72 bytes of output, most of
// them overlapping or crossing a cache line; on the Intel Xeon with the patch
// matrix in L2 that ran at about half the bandwidth of copy. Here eight runs
// are loaded into the halves of four ZMM registers, merged by three
// two-source permutes into 24 consecutive values, and written with three
// full ZMM stores. Each load reads one value past its run. A group cut short
// by the end of a level-2 iteration (fewer than eight runs) is stored three
// values at a time by ZMM stores under a 3-lane mask (AVX-512F only; a
// masked YMM store would need AVX-512VL), so nothing is written outside the
// runs.
//
// Go signature (copy_amd64.go), arguments as for copyBlockAVX2 (run is
// unused and must be 3; levels 0 and 1 must be contiguous in the
// destination, and the d2 carry is computed, as copyCarry does, from
// DstStride[1] = 3·n0):
//
//	func copyTiled3AVX512(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)
//
// Register map:
//
//	SI  source pointer (start of the current run)
//	DI  destination pointer (start of the current group of eight runs)
//	AX  bytes stored by a cut-short group (24 per run)
//	R8  n0, BX n1 (level reloads)
//	R9, R10, R11  level-0, level-1, level-2 countdowns
//	R12 s0, R13 s1, R14 s2 (source carry strides in bytes)
//	R15 d2 (destination carry stride in bytes at the end of level 2)
//	Z0-Z3  runs 2i (low half) and 2i+1 (high half) of the group
//	Z24-Z26  permute indices (tiled3Perm*), K1 = 0b111 (short-group stores)

DATA tiled3PermA<>+0(SB)/8, $0
DATA tiled3PermA<>+8(SB)/8, $1
DATA tiled3PermA<>+16(SB)/8, $2
DATA tiled3PermA<>+24(SB)/8, $4
DATA tiled3PermA<>+32(SB)/8, $5
DATA tiled3PermA<>+40(SB)/8, $6
DATA tiled3PermA<>+48(SB)/8, $8
DATA tiled3PermA<>+56(SB)/8, $9
GLOBL tiled3PermA<>(SB), RODATA|NOPTR, $64

DATA tiled3PermB<>+0(SB)/8, $2
DATA tiled3PermB<>+8(SB)/8, $4
DATA tiled3PermB<>+16(SB)/8, $5
DATA tiled3PermB<>+24(SB)/8, $6
DATA tiled3PermB<>+32(SB)/8, $8
DATA tiled3PermB<>+40(SB)/8, $9
DATA tiled3PermB<>+48(SB)/8, $10
DATA tiled3PermB<>+56(SB)/8, $12
GLOBL tiled3PermB<>(SB), RODATA|NOPTR, $64

DATA tiled3PermC<>+0(SB)/8, $5
DATA tiled3PermC<>+8(SB)/8, $6
DATA tiled3PermC<>+16(SB)/8, $8
DATA tiled3PermC<>+24(SB)/8, $9
DATA tiled3PermC<>+32(SB)/8, $10
DATA tiled3PermC<>+40(SB)/8, $12
DATA tiled3PermC<>+48(SB)/8, $13
DATA tiled3PermC<>+56(SB)/8, $14
GLOBL tiled3PermC<>(SB), RODATA|NOPTR, $64

// STEP advances SI to the next run of the nest and jumps to next, or, when
// the run just loaded ends an iteration of level 2, to tail with the bytes
// of the group's runs in AX.
#define STEP(next, tail, bytes) \
	ADDQ R12, SI; DECQ R9; JNZ next; \
	ADDQ R13, SI; MOVQ R8, R9; DECQ R10; JNZ next; \
	ADDQ R14, SI; MOVQ BX, R10; MOVQ $bytes, AX; DECQ R11; JMP tail

// MERGE turns the eight runs in Z0-Z3 into 24 consecutive values in Z0-Z2
// and stores them at DI.
#define MERGE \
	VPERMT2PD Z1, Z24, Z0; \
	VPERMT2PD Z2, Z25, Z1; \
	VPERMT2PD Z3, Z26, Z2; \
	VMOVUPD   Z0, (DI); \
	VMOVUPD   Z1, 64(DI); \
	VMOVUPD   Z2, 128(DI)

// func copyTiled3AVX512(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)
TEXT ·copyTiled3AVX512(SB), NOSPLIT, $0-96
	MOVQ      dst+0(FP), DI
	MOVQ      src+8(FP), SI
	MOVQ      n0+24(FP), R8
	MOVQ      n1+32(FP), BX
	MOVQ      n2+40(FP), R11
	MOVQ      s0+48(FP), R12
	MOVQ      s1+56(FP), R13
	MOVQ      s2+64(FP), R14
	MOVQ      d2+88(FP), R15
	MOVQ      R8, R9
	MOVQ      BX, R10
	VMOVDQU64 tiled3PermA<>(SB), Z24
	VMOVDQU64 tiled3PermB<>(SB), Z25
	VMOVDQU64 tiled3PermC<>(SB), Z26
	MOVL      $7, AX
	KMOVW     AX, K1

group:
	VMOVUPD (SI), Y0
	STEP(run1, tail1, 24)

run1:
	VINSERTF64X4 $1, (SI), Z0, Z0
	STEP(run2, tail2, 48)

run2:
	VMOVUPD (SI), Y1
	STEP(run3, tail3, 72)

run3:
	VINSERTF64X4 $1, (SI), Z1, Z1
	STEP(run4, tail4, 96)

run4:
	VMOVUPD (SI), Y2
	STEP(run5, tail5, 120)

run5:
	VINSERTF64X4 $1, (SI), Z2, Z2
	STEP(run6, tail6, 144)

run6:
	VMOVUPD (SI), Y3
	STEP(run7, tail7, 168)

run7:
	VINSERTF64X4 $1, (SI), Z3, Z3
	STEP(full, tail8, 192)

full:
	MERGE
	ADDQ $192, DI
	JMP  group

tail8:
	MERGE
	JMP next2

	// Level 2 ended after k < 8 runs of a group: store runs k-1 down to 0,
	// three values each.
tail7:
	VMOVUPD Z3, K1, 144(DI)

tail6:
	VEXTRACTF64X4 $1, Z2, Y4
	VMOVUPD       Z4, K1, 120(DI)

tail5:
	VMOVUPD Z2, K1, 96(DI)

tail4:
	VEXTRACTF64X4 $1, Z1, Y4
	VMOVUPD       Z4, K1, 72(DI)

tail3:
	VMOVUPD Z1, K1, 48(DI)

tail2:
	VEXTRACTF64X4 $1, Z0, Y4
	VMOVUPD       Z4, K1, 24(DI)

tail1:
	VMOVUPD Z0, K1, (DI)

next2:
	TESTQ R11, R11
	JZ    done
	ADDQ  AX, DI
	ADDQ  R15, DI
	JMP   group

done:
	VZEROUPPER
	RET
