package gemm

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/klauspost/cpuid/v2"
)

// A GEMM configuration is a micro-kernel (register tile shape and code)
// together with the cache blocking MC, KC, NC it runs with. As in BLIS's
// per-architecture contexts, the configuration is chosen per
// microarchitecture: archConfigs lists, for each CPU this package knows,
// the kernels to prefer and their blocking, each measured on that CPU or,
// where no such machine was available, derived from its documented caches
// by the analytical model (analyticBlocking). CPUs not in the table get the
// analytical model on the caches cpuid reports.
//
// To add a machine, run the tuner on it:
//
//	go test ./blas -run TestTune -tune -v
//
// and add the entry it prints to archConfigs.

// cacheLevel describes one level of data cache: size in bytes and
// associativity (ways). Lines are 64 bytes on every supported CPU.
type cacheLevel struct{ size, ways int }

// caches are the data caches seen by one core: L1D and L2 private, L3 the
// whole shared cache (zero when there is none).
type caches struct{ l1, l2, l3 cacheLevel }

// choice is one configuration of an architecture's table: a kernel by name
// and its blocking, with the measurement (or model) it came from.
type choice struct {
	kernel string
	block  Blocking
	basis  string
}

// archConfig is the table entry of one microarchitecture.
type archConfig struct {
	name    string
	caches  caches
	choices []choice // best first; kernels the build or CPU lacks are skipped
}

// archConfigs is the per-microarchitecture table. Entries whose basis says
// "model" were derived from the analytical model with the CPU's documented
// cache geometry; they are starting points for the tuner.
var archConfigs = []archConfig{
	{name: "zen5", caches: caches{l1: cacheLevel{48 << 10, 12}, l2: cacheLevel{1 << 20, 16}, l3: cacheLevel{32 << 20, 16}},
		choices: []choice{
			{"avx512-reg", Blocking{MC: 84, KC: 512, NC: 1024}, "measured: AMD EPYC family 26 model 2 (Zen 5), Dgemm n=1536–2048, tuner grid"},
			{"avx512", Blocking{MC: 84, KC: 512, NC: 1024}, "measured: AMD EPYC family 26 model 2 (Zen 5)"},
		}},
	{name: "zen4", caches: caches{l1: cacheLevel{32 << 10, 8}, l2: cacheLevel{1 << 20, 8}, l3: cacheLevel{32 << 20, 16}},
		choices: []choice{
			{"avx512", Blocking{MC: 84, KC: 512, NC: 512}, "measured: AMD EPYC family 25 model 17 (Zen 4), Dgemm n=1024 and 2048, grid"},
			{"avx512-reg", Blocking{MC: 84, KC: 512, NC: 512}, "measured: AMD EPYC family 25 model 17 (Zen 4), Dgemm NN/NT/TN/TT n=1024 and 2048, within 1% of avx512 (neither kernel nor MC 28–84, KC 512–1024, NC 512–1024 differs beyond noise)"},
		}},
	{name: "zen3", caches: caches{l1: cacheLevel{32 << 10, 8}, l2: cacheLevel{512 << 10, 8}, l3: cacheLevel{32 << 20, 16}},
		choices: []choice{
			{"avx2", Blocking{MC: 42, KC: 512, NC: 512}, "measured: AMD EPYC family 25 model 1 (Zen 3), Dgemm n=1024 and 2048"},
		}},
	{name: "zen2", caches: caches{l1: cacheLevel{32 << 10, 8}, l2: cacheLevel{512 << 10, 8}, l3: cacheLevel{16 << 20, 16}}},
	{name: "skylake-x", caches: caches{l1: cacheLevel{32 << 10, 8}, l2: cacheLevel{1 << 20, 16}, l3: cacheLevel{1408 << 10 * 16, 11}}},
	{name: "icelake-x", caches: caches{l1: cacheLevel{48 << 10, 12}, l2: cacheLevel{1280 << 10, 20}, l3: cacheLevel{1536 << 10 * 16, 12}}},
	{name: "sapphire-rapids", caches: caches{l1: cacheLevel{48 << 10, 12}, l2: cacheLevel{2 << 20, 16}, l3: cacheLevel{1875 << 10 * 32, 15}}},
	{name: "emerald-rapids", caches: caches{l1: cacheLevel{48 << 10, 12}, l2: cacheLevel{2 << 20, 16}, l3: cacheLevel{5 << 20 * 32, 16}}},
	{name: "granite-rapids", caches: caches{l1: cacheLevel{48 << 10, 12}, l2: cacheLevel{2 << 20, 16}, l3: cacheLevel{5 << 20 * 32, 16}}},
	{name: "haswell", caches: caches{l1: cacheLevel{32 << 10, 8}, l2: cacheLevel{256 << 10, 8}, l3: cacheLevel{8 << 20, 16}}},
	{name: "neoverse-n1", caches: caches{l1: cacheLevel{64 << 10, 4}, l2: cacheLevel{1 << 20, 8}, l3: cacheLevel{32 << 20, 16}}},
	{name: "neoverse-v1", caches: caches{l1: cacheLevel{64 << 10, 4}, l2: cacheLevel{1 << 20, 8}, l3: cacheLevel{32 << 20, 16}}},
	{name: "neoverse-n2", caches: caches{l1: cacheLevel{64 << 10, 4}, l2: cacheLevel{1 << 20, 8}, l3: cacheLevel{32 << 20, 16}}},
	{name: "neoverse-v2", caches: caches{l1: cacheLevel{64 << 10, 4}, l2: cacheLevel{2 << 20, 8}, l3: cacheLevel{32 << 20, 16}}},
	{name: "apple-m", caches: caches{l1: cacheLevel{128 << 10, 8}, l2: cacheLevel{12 << 20, 12}}},
}

// defaultCaches is the geometry assumed for what cpuid cannot tell on an
// unknown CPU: a conservative, common one.
var defaultCaches = caches{l1: cacheLevel{32 << 10, 8}, l2: cacheLevel{512 << 10, 8}, l3: cacheLevel{8 << 20, 16}}

// lookupArch returns the table entry of the named microarchitecture.
func lookupArch(name string) (archConfig, bool) {
	for _, a := range archConfigs {
		if a.name == name {
			return a, true
		}
	}
	return archConfig{}, false
}

// identify names the microarchitecture of a CPU from its vendor and x86
// family and model (on arm64, cpuid's family and model hold the MIDR
// implementer and part number); "" when it is not in the table.
func identify(vendor cpuid.Vendor, family, model int) string {
	switch vendor {
	case cpuid.AMD:
		switch {
		case family == 0x1a:
			return "zen5"
		case family == 0x19 && (model >= 0x10 && model <= 0x1f || model >= 0x60 && model <= 0x7f || model >= 0xa0 && model <= 0xaf):
			return "zen4"
		case family == 0x19:
			return "zen3"
		case family == 0x17 && model >= 0x30:
			return "zen2"
		}
	case cpuid.Intel:
		if family != 6 {
			return ""
		}
		switch model {
		case 0x55:
			return "skylake-x"
		case 0x6a, 0x6c:
			return "icelake-x"
		case 0x8f:
			return "sapphire-rapids"
		case 0xcf:
			return "emerald-rapids"
		case 0xad, 0xae:
			return "granite-rapids"
		case 0x3c, 0x3f, 0x45, 0x46, 0x3d, 0x47, 0x4f, 0x56, 0x4e, 0x5e, 0x8e, 0x9e, 0x97, 0x9a, 0xb7, 0xba, 0xbf:
			return "haswell" // Haswell to Raptor Lake: AVX2, two 256-bit FMA pipes
		}
	case cpuid.ARM, cpuid.Ampere:
		switch model {
		case 0xd0c:
			return "neoverse-n1"
		case 0xd40:
			return "neoverse-v1"
		case 0xd49:
			return "neoverse-n2"
		case 0xd4f:
			return "neoverse-v2"
		}
	case cpuid.Apple:
		return "apple-m"
	}
	return ""
}

// runningCaches merges what cpuid reports with the table entry's geometry
// (and defaultCaches for what neither knows). Virtual machines often hide
// the L3; associativity is never reported by cpuid's summary.
func runningCaches(arch archConfig, known bool) caches {
	c := defaultCaches
	if known {
		c = arch.caches
	}
	if s := cpuid.CPU.Cache.L1D; s > 0 {
		c.l1.size = s
	}
	if s := cpuid.CPU.Cache.L2; s > 0 {
		c.l2.size = s
	}
	if s := cpuid.CPU.Cache.L3; s > 0 {
		c.l3.size = s
	}
	return c
}

// override is a configuration forced by the SOLVEGP_GEMM environment
// variable, read once at start-up: a comma-separated list of arch=NAME
// (use that table entry instead of the detected one), kernel=NAME (make
// that kernel the default) and mc=, kc=, nc= (its blocking). For example
//
//	SOLVEGP_GEMM=kernel=avx2,kc=256 go test ./blas
type override struct {
	arch, kernel string
	block        Blocking
}

// parseOverride parses the SOLVEGP_GEMM syntax.
func parseOverride(s string) (override, error) {
	var o override
	if strings.TrimSpace(s) == "" {
		return o, nil
	}
	for _, f := range strings.Split(s, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok || val == "" {
			return override{}, fmt.Errorf("SOLVEGP_GEMM: %q is not key=value", f)
		}
		switch key {
		case "arch":
			if _, known := lookupArch(val); !known {
				return override{}, fmt.Errorf("SOLVEGP_GEMM: unknown arch %q", val)
			}
			o.arch = val
		case "kernel":
			o.kernel = val
		case "mc", "kc", "nc":
			v, err := strconv.Atoi(val)
			if err != nil || v < 1 || v > 1<<16 {
				return override{}, fmt.Errorf("SOLVEGP_GEMM: %s=%q is not an integer in [1, 65536]", key, val)
			}
			switch key {
			case "mc":
				o.block.MC = v
			case "kc":
				o.block.KC = v
			default:
				o.block.NC = v
			}
		default:
			return override{}, fmt.Errorf("SOLVEGP_GEMM: unknown key %q (arch, kernel, mc, kc, nc)", key)
		}
	}
	return o, nil
}

// configErr records why SOLVEGP_GEMM was ignored, if it was.
var configErr error

// ConfigError reports why the SOLVEGP_GEMM override was ignored (malformed,
// or naming a kernel this CPU or build lacks), or nil.
func ConfigError() error { return configErr }

// Arch returns the microarchitecture whose table entry configured the
// backends ("zen5", "haswell", ...), or "" for a CPU the table does not
// know, whose blocking comes from the analytical model alone.
func Arch() string { return detected.name }

// detected is the running CPU's table entry (name "" when unknown).
var detected archConfig

// configure builds the backend list, best first, for the table entry arch
// (name "" when the CPU is not in the table), the usable kernels (best first by the
// generic order) and the caches, then applies the override o.
func configure(arch archConfig, specs []kernelSpec, c caches, o override) ([]*Backend, error) {
	var out []*Backend
	have := func(name string) bool {
		for _, be := range out {
			if be.name == name {
				return true
			}
		}
		return false
	}
	for _, ch := range arch.choices {
		for _, s := range specs {
			if s.name == ch.kernel && !have(s.name) {
				out = append(out, s.backend(arch.name, ch.block, ch.basis))
			}
		}
	}
	for _, s := range specs {
		if !have(s.name) {
			out = append(out, s.backend(arch.name, analyticBlocking(s.mr, s.nr, c), "model"))
		}
	}
	if o.kernel == "" && o.block == (Blocking{}) {
		return out, nil
	}
	i := 0
	if o.kernel != "" {
		i = -1
		for j, be := range out {
			if be.name == o.kernel {
				i = j
			}
		}
		if i < 0 {
			return out, fmt.Errorf("SOLVEGP_GEMM: kernel %q is not available on this CPU and build", o.kernel)
		}
	}
	be := out[i].WithBlocking(o.block)
	be.basis = "SOLVEGP_GEMM override"
	out = append([]*Backend{be}, append(out[:i:i], out[i+1:]...)...)
	return out, nil
}
