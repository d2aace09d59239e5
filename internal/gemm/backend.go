package gemm

import (
	"fmt"
	"math"
	"os"
	"sync"

	"github.com/klauspost/cpuid/v2"
)

// kernelFunc is the calling convention shared by all micro-kernels. The
// caller guarantees len(a) ≥ k·MR, len(b) ≥ k·NR and, unless the tile is
// empty, len(c) ≥ (MR−1)·ldc+NR with ldc ≥ NR.
type kernelFunc func(k int, alpha float64, a, b []float64, beta float64, c []float64, ldc int)

// Backend is one GEMM micro-kernel implementation together with its tile
// shape and cache blocking. Backend values are created by this package only;
// they are immutable and safe for concurrent use.
type Backend struct {
	name    string // kernel name: "avx512-reg", "avx512", "avx2", "neon", "generic"
	isa     string // instruction set: "avx512", "avx2", "neon", "generic"
	arch    string // microarchitecture whose table entry chose the blocking
	basis   string // where the blocking came from: a measurement or "model"
	mr, nr  int
	kernel  kernelFunc
	partial partialFunc // nil: partial tiles go through a full tile
	next    nextFunc    // nil: KernelNextNoCheck runs kernel
	trsm    trsmFunc    // nil: TrsmTile runs its Go definition
	block   Blocking
}

// partialFunc computes the first rows rows (1 ≤ rows < MR) of a tile with
// the contract of kernelFunc; only those rows of C are read or written.
type partialFunc func(rows, k int, alpha float64, a, b []float64, beta float64, c []float64, ldc int)

// nextFunc is a kernelFunc that also prefetches the start of next into L2
// while it runs (see KernelNextNoCheck).
type nextFunc func(k int, alpha float64, a, b []float64, beta float64, c []float64, ldc int, next []float64)

// Name returns the kernel's name: "avx512-reg" (14×16, A broadcast into a
// register), "avx512" (14×16, A broadcast from memory by the FMA), "avx2"
// (6×8), "neon" (6×8) or "generic" (4×4 Go).
func (be *Backend) Name() string { return be.name }

// ISA returns the instruction set the kernel runs on: "avx512", "avx2",
// "neon" or "generic".
func (be *Backend) ISA() string { return be.isa }

// Arch returns the microarchitecture whose configuration table entry chose
// this backend's blocking ("zen5", "haswell", ...), or "" on a CPU the
// table does not know.
func (be *Backend) Arch() string { return be.arch }

// Basis says where the blocking came from: the measurement recorded in the
// configuration table, "model" for the analytical model on the CPU's cache
// geometry, or "SOLVEGP_GEMM override".
func (be *Backend) Basis() string { return be.basis }

// Describe returns a one-line description of the configuration, for
// benchmark reports: kernel, tile, blocking, architecture and basis.
func (be *Backend) Describe() string {
	arch := be.arch
	if arch == "" {
		arch = "unknown CPU"
	}
	return fmt.Sprintf("%s %d×%d, MC %d KC %d NC %d (%s; %s)", be.name, be.mr, be.nr,
		be.block.MC, be.block.KC, be.block.NC, arch, be.basis)
}

// MR returns the number of rows of the backend's register tile.
func (be *Backend) MR() int { return be.mr }

// NR returns the number of columns of the backend's register tile.
func (be *Backend) NR() int { return be.nr }

// Blocking returns the cache-blocking parameters tuned for this backend on
// the running machine.
func (be *Backend) Blocking() Blocking { return be.block }

// String returns the backend's name.
func (be *Backend) String() string { return be.name }

// Kernel computes the MR×NR tile C := β·C + α·A·B from the packed
// micro-panels a (k·MR values) and b (k·NR values) into the row-major C with
// leading dimension ldc. When beta is zero C is only written. Kernel panics if
// a slice is too short or ldc < NR.
func (be *Backend) Kernel(k int, alpha float64, a, b []float64, beta float64, c []float64, ldc int) {
	if k < 0 {
		panic("gemm: negative k")
	}
	if ldc < be.nr {
		panic(fmt.Sprintf("gemm: ldc %d < NR %d", ldc, be.nr))
	}
	if len(a) < k*be.mr || len(b) < k*be.nr {
		panic("gemm: packed panel too short")
	}
	if len(c) < (be.mr-1)*ldc+be.nr {
		panic("gemm: C too short")
	}
	be.kernel(k, alpha, a, b, beta, c, ldc)
}

// KernelNoCheck is Kernel without argument validation, for callers (such as
// the blocked BLAS drivers) that establish the preconditions themselves.
// Violating them is undefined behaviour in the assembly backends.
func (be *Backend) KernelNoCheck(k int, alpha float64, a, b []float64, beta float64, c []float64, ldc int) {
	be.kernel(k, alpha, a, b, beta, c, ldc)
}

// NextPrefetch is the length, in values, of the part of next that
// KernelNextNoCheck prefetches for a given k: a quarter of a 16-column
// micro-panel of depth k, so that four tiles bring in the whole panel.
func NextPrefetch(k int) int { return 4 * k }

// KernelNextNoCheck is KernelNoCheck that may also prefetch the first
// NextPrefetch(k) values of next into L2 while the tile is computed, for
// the blocked drivers to bring the next B micro-panel in from L3 behind the
// arithmetic (backends without such a kernel ignore next). The result is
// that of KernelNoCheck bit for bit. next must hold NextPrefetch(k) values.
func (be *Backend) KernelNextNoCheck(k int, alpha float64, a, b []float64, beta float64, c []float64, ldc int, next []float64) {
	if be.next != nil {
		be.next(k, alpha, a, b, beta, c, ldc, next)
		return
	}
	be.kernel(k, alpha, a, b, beta, c, ldc)
}

// KernelRows is Kernel restricted to the first rows rows of the tile
// (1 ≤ rows ≤ MR): the packed panels are the same MR-row and NR-column
// panels, but only rows rows of C are read or written, so C needs only
// (rows−1)·ldc+NR values. Each computed element is bit-identical to the one
// Kernel would produce. Backends with partial-row kernels (avx512, avx2)
// also skip the work of the missing rows.
func (be *Backend) KernelRows(rows, k int, alpha float64, a, b []float64, beta float64, c []float64, ldc int) {
	if rows < 1 || rows > be.mr {
		panic(fmt.Sprintf("gemm: rows %d outside [1, %d]", rows, be.mr))
	}
	if k < 0 {
		panic("gemm: negative k")
	}
	if ldc < be.nr {
		panic(fmt.Sprintf("gemm: ldc %d < NR %d", ldc, be.nr))
	}
	if len(a) < k*be.mr || len(b) < k*be.nr {
		panic("gemm: packed panel too short")
	}
	if len(c) < (rows-1)*ldc+be.nr {
		panic("gemm: C too short")
	}
	be.KernelRowsNoCheck(rows, k, alpha, a, b, beta, c, ldc)
}

// maxTile bounds MR·NR over all backends.
const maxTile = 256

// KernelRowsNoCheck is KernelRows without argument validation.
func (be *Backend) KernelRowsNoCheck(rows, k int, alpha float64, a, b []float64, beta float64, c []float64, ldc int) {
	switch {
	case rows == be.mr:
		be.kernel(k, alpha, a, b, beta, c, ldc)
	case be.partial != nil:
		be.partial(rows, k, alpha, a, b, beta, c, ldc)
	default:
		// Full tile with β = 0 into scratch (t = α·acc), then the same
		// final rounding as every kernel: C = t or fma(β, C, t). The
		// scratch comes from a pool: passed to an indirect call it would
		// escape, and a heap tile per partial row block is garbage that
		// the NEON and generic backends would make on every GEMM.
		tp := tilePool.Get().(*[maxTile]float64)
		defer tilePool.Put(tp)
		t := tp[:]
		nr := be.nr
		be.kernel(k, alpha, a, b, 0, t[:be.mr*nr], nr)
		for i := 0; i < rows; i++ {
			crow := c[i*ldc : i*ldc+nr]
			trow := t[i*nr : i*nr+nr]
			if beta == 0 {
				copy(crow, trow)
				continue
			}
			for j, v := range trow {
				crow[j] = math.FMA(beta, crow[j], v)
			}
		}
	}
}

// Twin returns the pure-Go model of this backend: a backend with the same
// tile shape whose kernel is Reference. Its results are bit-identical to the
// backend's by construction of every kernel (and checked by the tests).
func (be *Backend) Twin() *Backend {
	mr, nr := be.mr, be.nr
	return &Backend{
		name: be.name + "-twin", isa: "generic", arch: be.arch, basis: be.basis,
		mr: mr, nr: nr,
		block: be.block,
		kernel: func(k int, alpha float64, a, b []float64, beta float64, c []float64, ldc int) {
			Reference(mr, nr, k, alpha, a, b, beta, c, ldc)
		},
	}
}

// kernelSpec is one micro-kernel the build provides for the running CPU.
type kernelSpec struct {
	name, isa string
	mr, nr    int
	kernel    kernelFunc
	partial   partialFunc
	next      nextFunc
	trsm      trsmFunc
}

// backend returns the spec as a backend with the given blocking.
func (s kernelSpec) backend(arch string, bl Blocking, basis string) *Backend {
	be := &Backend{name: s.name, isa: s.isa, arch: arch, basis: basis, mr: s.mr, nr: s.nr,
		kernel: s.kernel, partial: s.partial, next: s.next, trsm: s.trsm}
	return be.WithBlocking(bl)
}

var genericSpec = kernelSpec{name: "generic", isa: "generic", mr: genericMR, nr: genericNR, kernel: kernelGeneric}

var backends = initBackends()

// initBackends lists the usable backends, best first, ending with generic:
// the running CPU's configuration table entry, then every other usable
// kernel with the analytical model's blocking, with the SOLVEGP_GEMM
// override applied.
func initBackends() []*Backend {
	specs := append(archKernels(), genericSpec)
	name := identify(cpuid.CPU.VendorID, cpuid.CPU.Family, cpuid.CPU.Model)
	o, err := parseOverride(os.Getenv("SOLVEGP_GEMM"))
	if o.arch != "" {
		name = o.arch
	}
	arch, known := lookupArch(name)
	detected = arch
	c := runningCaches(arch, known)
	bs, oerr := configure(arch, specs, c, o)
	if err == nil {
		err = oerr
	}
	configErr = err
	if oerr != nil {
		bs, _ = configure(arch, specs, c, override{})
	}
	return bs
}

// Backends returns every backend usable on the running machine, best first.
// The last element is always the generic backend. The returned slice is a
// fresh copy.
func Backends() []*Backend {
	return append([]*Backend(nil), backends...)
}

// Default returns the best backend for the running machine, chosen once at
// program start-up.
func Default() *Backend { return backends[0] }

// Lookup returns the usable backend with the given name ("avx512", "avx2",
// "neon" or "generic", as Name reports them; matched exactly), or nil if
// there is none of that name or the running machine (or the build) does
// not provide it.
func Lookup(name string) *Backend {
	for _, be := range backends {
		if be.name == name {
			return be
		}
	}
	return nil
}

// WithBlocking returns a copy of the backend that uses the given cache
// blocking instead of the tuned one, for experiments and for tests that need
// small blocks. MC is rounded up to a multiple of MR and NC to a multiple of
// NR; values below one are replaced by the tuned ones.
func (be *Backend) WithBlocking(bl Blocking) *Backend {
	nb := *be
	if bl.MC < 1 {
		bl.MC = be.block.MC
	}
	if bl.KC < 1 {
		bl.KC = be.block.KC
	}
	if bl.NC < 1 {
		bl.NC = be.block.NC
	}
	bl.MC = (bl.MC + be.mr - 1) / be.mr * be.mr
	bl.NC = (bl.NC + be.nr - 1) / be.nr * be.nr
	nb.block = bl
	return &nb
}

// tilePool recycles the scratch tiles of KernelRowsNoCheck.
var tilePool = sync.Pool{New: func() any { return new([maxTile]float64) }}
