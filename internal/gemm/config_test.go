package gemm

import (
	"os"
	"strings"
	"testing"

	"github.com/klauspost/cpuid/v2"
)

// TestAnalyticBlockingPinned pins the model's output for the cache
// geometry of known CPUs, worked by hand from the formulas in
// analyticBlocking's comment.
func TestAnalyticBlockingPinned(t *testing.T) {
	zen5, _ := lookupArch("zen5")
	haswell, _ := lookupArch("haswell")
	for _, tc := range []struct {
		name   string
		mr, nr int
		c      caches
		want   Blocking
	}{
		// L1 48 KiB 12-way: 64 sets; CA = ⌊11·14/30⌋ = 5, CB = 6,
		// KC = 6·64·64/(16·8) = 192. L2 1 MiB 16-way: 1024 sets, B takes
		// ⌈16·192·8/65536⌉ = 1 way, MC = 14·65536/(192·8) = 597 → 588.
		// L3 32 MiB 16-way: 32768 sets, A takes ⌈588·192·8/2^21⌉ = 1 way,
		// NC = min(14·2^21/1536, 4096) = 4096.
		{"zen5 14×16", 14, 16, zen5.caches, Blocking{MC: 588, KC: 192, NC: 4096}},
		// L1 32 KiB 8-way: 64 sets; CA = ⌊7·6/14⌋ = 3, CB = 4,
		// KC = 4·64·64/64 = 256. L2 256 KiB 8-way: 512 sets, B takes 1
		// way, MC = 6·32768/2048 = 96. L3 8 MiB 16-way: 8192 sets, A
		// takes 1 way, NC = 14·524288/2048 = 3584.
		{"haswell 6×8", 6, 8, haswell.caches, Blocking{MC: 96, KC: 256, NC: 3584}},
		// No L3: NC capped at 4096 (a multiple of 16).
		{"no L3", 14, 16, caches{l1: cacheLevel{32 << 10, 8}, l2: cacheLevel{1 << 20, 8}}, Blocking{MC: 0, KC: 0, NC: 4096}},
	} {
		got := analyticBlocking(tc.mr, tc.nr, tc.c)
		want := tc.want
		if want.MC == 0 { // only NC pinned
			want.MC, want.KC = got.MC, got.KC
		}
		if got != want {
			t.Errorf("%s: analyticBlocking = %+v, want %+v", tc.name, got, want)
		}
	}
}

// TestAnalyticBlockingValid checks the model's invariants on every table
// geometry, on degenerate caches and for every tile shape in use.
func TestAnalyticBlockingValid(t *testing.T) {
	geoms := []caches{defaultCaches, {}, {l1: cacheLevel{1, 1}, l2: cacheLevel{1, 1}, l3: cacheLevel{1, 1}},
		{l1: cacheLevel{1 << 30, 64}, l2: cacheLevel{1 << 30, 64}, l3: cacheLevel{1 << 40, 64}}}
	for _, a := range archConfigs {
		geoms = append(geoms, a.caches)
	}
	for _, c := range geoms {
		for _, tile := range [][2]int{{14, 16}, {6, 8}, {4, 4}, {8, 24}} {
			mr, nr := tile[0], tile[1]
			bl := analyticBlocking(mr, nr, c)
			if bl.KC < 8 || bl.KC%8 != 0 || bl.MC < mr || bl.MC%mr != 0 || bl.NC < nr || bl.NC%nr != 0 || bl.NC > 4096 {
				t.Errorf("analyticBlocking(%d×%d, %+v) = %+v", mr, nr, c, bl)
			}
		}
	}
}

// TestArchTable checks that every table entry is well formed: a unique
// name, caches with sizes and ways, and choices naming known kernels with
// valid blocking and a basis.
func TestArchTable(t *testing.T) {
	known := map[string]bool{"avx512-reg": true, "avx512": true, "avx2": true, "neon": true, "generic": true}
	seen := map[string]bool{}
	for _, a := range archConfigs {
		if a.name == "" || seen[a.name] {
			t.Errorf("duplicate or empty arch name %q", a.name)
		}
		seen[a.name] = true
		if a.caches.l1.size <= 0 || a.caches.l1.ways <= 0 || a.caches.l2.size <= 0 || a.caches.l2.ways <= 0 {
			t.Errorf("%s: incomplete caches %+v", a.name, a.caches)
		}
		for _, ch := range a.choices {
			if !known[ch.kernel] || ch.basis == "" || ch.block.MC < 1 || ch.block.KC < 1 || ch.block.NC < 1 {
				t.Errorf("%s: bad choice %+v", a.name, ch)
			}
		}
	}
	for _, want := range []string{"zen5", "zen4", "zen3", "skylake-x", "sapphire-rapids", "emerald-rapids",
		"granite-rapids", "haswell", "neoverse-n1", "neoverse-v2", "apple-m"} {
		if !seen[want] {
			t.Errorf("no table entry for %s", want)
		}
	}
}

func TestIdentify(t *testing.T) {
	for _, tc := range []struct {
		v             cpuid.Vendor
		family, model int
		want          string
	}{
		{cpuid.AMD, 0x1a, 2, "zen5"},
		{cpuid.AMD, 0x19, 0x11, "zen4"},
		{cpuid.AMD, 0x19, 0x61, "zen4"},
		{cpuid.AMD, 0x19, 0x01, "zen3"},
		{cpuid.AMD, 0x17, 0x31, "zen2"},
		{cpuid.AMD, 0x17, 0x01, ""},
		{cpuid.Intel, 6, 0x55, "skylake-x"},
		{cpuid.Intel, 6, 0x8f, "sapphire-rapids"},
		{cpuid.Intel, 6, 0xcf, "emerald-rapids"},
		{cpuid.Intel, 6, 0xad, "granite-rapids"},
		{cpuid.Intel, 6, 0x3c, "haswell"},
		{cpuid.Intel, 6, 0x01, ""},
		{cpuid.ARM, 0, 0xd0c, "neoverse-n1"},
		{cpuid.ARM, 0, 0xd4f, "neoverse-v2"},
		{cpuid.Apple, 0, 0, "apple-m"},
		{cpuid.VendorUnknown, 0, 0, ""},
	} {
		if got := identify(tc.v, tc.family, tc.model); got != tc.want {
			t.Errorf("identify(%v, %#x, %#x) = %q, want %q", tc.v, tc.family, tc.model, got, tc.want)
		}
	}
}

func TestParseOverride(t *testing.T) {
	o, err := parseOverride(" arch=zen4, kernel=avx2 ,mc=48,kc=256,nc=1024")
	if err != nil || o != (override{arch: "zen4", kernel: "avx2", block: Blocking{MC: 48, KC: 256, NC: 1024}}) {
		t.Errorf("parseOverride = %+v, %v", o, err)
	}
	if o, err := parseOverride(""); err != nil || o != (override{}) {
		t.Errorf("parseOverride(\"\") = %+v, %v", o, err)
	}
	for _, bad := range []string{"zen4", "arch=pentium", "mc=0", "kc=x", "nc=99999999", "foo=1", "kernel="} {
		if _, err := parseOverride(bad); err == nil {
			t.Errorf("parseOverride(%q) accepted", bad)
		}
	}
}

// TestConfigure checks the order and blocking of the backend list built
// from a table entry, and the override.
func TestConfigure(t *testing.T) {
	specs := []kernelSpec{
		{name: "k1", isa: "x", mr: 4, nr: 4, kernel: kernelGeneric},
		{name: "k2", isa: "x", mr: 4, nr: 4, kernel: kernelGeneric},
		genericSpec,
	}
	arch := archConfig{name: "test", caches: defaultCaches, choices: []choice{
		{"k2", Blocking{MC: 40, KC: 64, NC: 128}, "measured"},
		{"missing", Blocking{MC: 8, KC: 8, NC: 8}, "measured"},
	}}
	names := func(bs []*Backend) string {
		var s []string
		for _, be := range bs {
			s = append(s, be.Name())
		}
		return strings.Join(s, ",")
	}
	bs, err := configure(arch, specs, defaultCaches, override{})
	if err != nil || names(bs) != "k2,k1,generic" {
		t.Fatalf("configure = %s, %v", names(bs), err)
	}
	if bs[0].Blocking() != (Blocking{MC: 40, KC: 64, NC: 128}) || bs[0].Basis() != "measured" || bs[0].Arch() != "test" {
		t.Errorf("table choice became %s", bs[0].Describe())
	}
	if bs[1].Blocking() != analyticBlocking(4, 4, defaultCaches) || bs[1].Basis() != "model" {
		t.Errorf("untabled kernel became %s", bs[1].Describe())
	}
	bs, err = configure(arch, specs, defaultCaches, override{kernel: "k1", block: Blocking{KC: 32}})
	if err != nil || names(bs) != "k1,k2,generic" || bs[0].Blocking().KC != 32 || bs[0].Basis() != "SOLVEGP_GEMM override" {
		t.Errorf("override: %s (%s), %v", names(bs), bs[0].Describe(), err)
	}
	if _, err := configure(arch, specs, defaultCaches, override{kernel: "nope"}); err == nil {
		t.Error("override naming a missing kernel accepted")
	}
}

// TestDefaultDescribed checks that the running configuration says what it
// is and that the SOLVEGP_GEMM variable of this process was accepted.
func TestDefaultDescribed(t *testing.T) {
	if err := ConfigError(); err != nil {
		t.Fatal(err)
	}
	if env := os.Getenv("SOLVEGP_GEMM"); env != "" {
		o, err := parseOverride(env)
		if err != nil {
			t.Fatal(err)
		}
		if o.kernel != "" && Default().Name() != o.kernel {
			t.Errorf("SOLVEGP_GEMM=%s: default kernel is %s", env, Default().Name())
		}
		if Default().Basis() != "SOLVEGP_GEMM override" {
			t.Errorf("SOLVEGP_GEMM=%s: default basis is %q", env, Default().Basis())
		}
	}
	d := Default().Describe()
	if !strings.HasPrefix(d, Default().Name()+" ") || !strings.Contains(d, "MC ") {
		t.Errorf("Describe() = %q", d)
	}
	t.Logf("arch %q: %s", Arch(), d)
}
