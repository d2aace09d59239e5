package dataset

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// idxBytes encodes an unsigned-byte IDX file byte by byte, independently
// of IDX.WriteTo (which TestIDXWriteTo checks against it).
func idxBytes(dims []int, data []byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, 0x08, byte(len(dims))})
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	b.Write(data)
	return b.Bytes()
}

func TestIDXWriteTo(t *testing.T) {
	data := make([]byte, 2*3*5)
	for i := range data {
		data[i] = byte(7 * i)
	}
	x := &IDX{Dims: []int{2, 3, 5}, Data: data}
	var b bytes.Buffer
	n, err := x.WriteTo(&b)
	if err != nil || n != int64(b.Len()) || !bytes.Equal(b.Bytes(), idxBytes(x.Dims, data)) {
		t.Fatalf("WriteTo: %d bytes, %v; wrote % x", n, err, b.Bytes())
	}
	back, err := ReadIDX(&b, "round trip")
	if err != nil || !slices.Equal(back.Dims, x.Dims) || !bytes.Equal(back.Data, data) {
		t.Fatalf("read back %+v, %v", back, err)
	}
	for _, bad := range []*IDX{
		{Dims: nil, Data: nil},
		{Dims: make([]int, 256), Data: nil},
		{Dims: []int{2, -1}, Data: nil},
		{Dims: []int{1 << 32, 0}, Data: nil},
		{Dims: []int{1 << 16, 1 << 16}, Data: nil},
		{Dims: []int{2, 3}, Data: make([]byte, 5)},
	} {
		var b bytes.Buffer
		if n, err := bad.WriteTo(&b); err == nil || n != 0 || b.Len() != 0 {
			t.Errorf("dims %v, %d bytes: wrote %d bytes, err %v", bad.Dims, len(bad.Data), n, err)
		}
	}
}

func gz(b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

func write(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadIDXRoundTrip(t *testing.T) {
	const n, h, w = 3, 2, 4
	px := make([]byte, n*h*w)
	for i := range px {
		px[i] = byte(i * 7)
	}
	labels := []byte{2, 0, 9}
	for _, compress := range []bool{false, true} {
		dir := t.TempDir()
		ib, lb := idxBytes([]int{n, h, w}, px), idxBytes([]int{n}, labels)
		if compress {
			ib, lb = gz(ib), gz(lb)
		}
		im, err := LoadIDX(write(t, dir, "img", ib), write(t, dir, "lab", lb), 10)
		if err != nil {
			t.Fatal(err)
		}
		if im.N != n || im.Height != h || im.Width != w || im.Channels != 1 || im.Classes != 10 {
			t.Fatalf("shape %+v", im)
		}
		for i, b := range px {
			if im.Pixels[i] != float64(b)/255 {
				t.Fatalf("pixel %d = %g, want %g", i, im.Pixels[i], float64(b)/255)
			}
		}
		for i, l := range labels {
			if im.Labels[i] != int(l) {
				t.Fatalf("label %d = %d, want %d", i, im.Labels[i], l)
			}
		}
		if got := im.Image(1)[0]; got != float64(px[h*w])/255 {
			t.Fatalf("Image(1)[0] = %g", got)
		}
		sub, err := im.Subset([]int{2, 0})
		if err != nil || sub.N != 2 || sub.Labels[0] != 9 || sub.Pixels[0] != im.Image(2)[0] {
			t.Fatalf("Subset: %v %+v", err, sub)
		}
		if _, err := im.Subset([]int{3}); err == nil {
			t.Fatal("Subset accepted an out-of-range index")
		}
		if dims, err := IDXDims(filepath.Join(dir, "img")); err != nil || !slices.Equal(dims, []int{n, h, w}) {
			t.Fatalf("IDXDims: %v, %v", dims, err)
		}
		// The images alone: the same pixels, no labels.
		only, err := LoadIDXImages(filepath.Join(dir, "img"))
		if err != nil {
			t.Fatal(err)
		}
		if only.N != n || only.Height != h || only.Width != w || only.Channels != 1 || only.Classes != 0 || only.Labels != nil {
			t.Fatalf("LoadIDXImages shape %+v", only)
		}
		for i := range px {
			if only.Pixels[i] != im.Pixels[i] {
				t.Fatalf("LoadIDXImages pixel %d = %g, want %g", i, only.Pixels[i], im.Pixels[i])
			}
		}
		sub, err = only.Subset([]int{2, 0})
		if err != nil || sub.N != 2 || sub.Labels != nil || sub.Pixels[0] != im.Image(2)[0] {
			t.Fatalf("Subset of unlabelled images: %v %+v", err, sub)
		}
	}
}

func TestLoadIDXErrors(t *testing.T) {
	dir := t.TempDir()
	good := idxBytes([]int{2, 2, 2}, make([]byte, 8))
	goodLab := write(t, dir, "lab", idxBytes([]int{2}, []byte{1, 1}))
	goodImg := write(t, dir, "img", good)
	// A gzip stream ends with the CRC-32 and length of its content.
	badCRC := gz(good)
	badCRC[len(badCRC)-8] ^= 0xff
	noTrailer := gz(good)
	noTrailer = noTrailer[:len(noTrailer)-8]
	// Zero padding after a complete member, which gunzip accepts, loads.
	padded := append(gz(good), make([]byte, 512)...)
	if _, err := LoadIDX(write(t, dir, "padded.gz", padded), goodLab, 10); err != nil {
		t.Errorf("zero-padded gzip: %v", err)
	}
	cases := []struct {
		name, img, lab string
		classes        int
		want           string
	}{
		{"truncated data", write(t, dir, "trunc", good[:len(good)-1]), goodLab, 10, "truncated"},
		{"truncated header", write(t, dir, "trunch", good[:6]), goodLab, 10, "truncated"},
		{"bad magic", write(t, dir, "magic", append([]byte{1, 2}, good[2:]...)), goodLab, 10, "not an IDX"},
		{"bad type", write(t, dir, "type", append([]byte{0, 0, 0x0D}, good[3:]...)), goodLab, 10, "element type"},
		{"trailing", write(t, dir, "trail", append(append([]byte{}, good...), 0)), goodLab, 10, "trailing"},
		{"count mismatch", goodImg, write(t, dir, "lab3", idxBytes([]int{3}, []byte{1, 1, 1})), 10, "2 images but"},
		{"label range", goodImg, write(t, dir, "labbig", idxBytes([]int{2}, []byte{1, 10})), 10, "out of range"},
		{"image dims", write(t, dir, "img2d", idxBytes([]int{2, 4}, make([]byte, 8))), goodLab, 10, "want 3"},
		{"classes", goodImg, goodLab, 0, "classes"},
		{"missing", filepath.Join(dir, "nope"), goodLab, 10, "no such file"},
		{"corrupt gzip", write(t, dir, "badgz", []byte{0x1f, 0x8b, 0, 1, 2}), goodLab, 10, "badgz"},
		{"gzip checksum", write(t, dir, "crc.gz", badCRC), goodLab, 10, "checksum"},
		{"gzip trailer cut", write(t, dir, "cut.gz", noTrailer), goodLab, 10, "truncated"},
		{"labels gzip checksum", goodImg, write(t, dir, "labcrc.gz", func() []byte {
			b := gz(idxBytes([]int{2}, []byte{1, 1}))
			b[len(b)-8] ^= 0xff
			return b
		}()), 10, "checksum"},
		{"huge dims", write(t, dir, "huge", idxBytes([]int{1 << 20, 1 << 20, 1 << 20}, nil)), goodLab, 10, "too large"},
		// A valid IDX file, but of empty images: it loaded as 2 images of
		// no pixels.
		{"zero rows", write(t, dir, "rows0", idxBytes([]int{2, 0, 28}, nil)), goodLab, 10, "empty images"},
		{"zero columns", write(t, dir, "cols0", idxBytes([]int{2, 28, 0}, nil)), goodLab, 10, "empty images"},
	}
	for _, c := range cases {
		_, err := LoadIDX(c.img, c.lab, c.classes)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not mention %q", c.name, err, c.want)
		}
		// IDXDims reads the header alone: it finds the faults of the
		// header, not those of the data.
		headerFault := strings.Contains(c.name, "header") || strings.Contains(c.name, "magic") || strings.Contains(c.name, "type") ||
			strings.Contains(c.name, "huge") || c.name == "missing" || c.name == "corrupt gzip"
		if _, err := IDXDims(c.img); headerFault != (err != nil) {
			t.Errorf("%s: IDXDims error %v", c.name, err)
		} else if err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: IDXDims error %q does not mention %q", c.name, err, c.want)
		}
		// LoadIDXImages gives the image file's errors and takes no labels.
		_, err = LoadIDXImages(c.img)
		if imageFault := c.img != goodImg; imageFault != (err != nil) {
			t.Errorf("%s: LoadIDXImages error %v", c.name, err)
		} else if err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: LoadIDXImages error %q does not mention %q", c.name, err, c.want)
		}
	}
}

func cifarRecordBytes(label byte, seed int) []byte {
	rec := make([]byte, cifarRecord)
	rec[0] = label
	for i := 1; i < len(rec); i++ {
		rec[i] = byte(i*31 + seed)
	}
	return rec
}

func TestReadCIFAR10(t *testing.T) {
	var all []byte
	for i, l := range []byte{3, 9, 0} {
		all = append(all, cifarRecordBytes(l, i)...)
	}
	dir := t.TempDir()
	p1 := write(t, dir, "b1.bin", all)
	p2 := write(t, dir, "b2.bin.gz", gz(cifarRecordBytes(5, 7)))
	im, err := LoadCIFAR10(p1, p2)
	if err != nil {
		t.Fatal(err)
	}
	if im.N != 4 || im.Height != 32 || im.Width != 32 || im.Channels != 3 {
		t.Fatalf("shape %+v", im)
	}
	if want := []int{3, 9, 0, 5}; !equalInts(im.Labels, want) {
		t.Fatalf("labels %v, want %v", im.Labels, want)
	}
	// Pixel (row 5, col 7, channel c) of record 1 comes from plane c.
	rec := cifarRecordBytes(9, 1)[1:]
	const r, c = 5, 7
	for ch := 0; ch < 3; ch++ {
		want := float64(rec[ch*1024+r*32+c]) / 255
		if got := im.Image(1)[(r*32+c)*3+ch]; got != want {
			t.Fatalf("channel %d: got %g, want %g", ch, got, want)
		}
	}
	if _, err := ReadCIFAR10(bytes.NewReader(all[:len(all)-5]), "x"); err == nil || !strings.Contains(err.Error(), "record 2 is truncated") {
		t.Fatalf("truncated: %v", err)
	}
	bad := cifarRecordBytes(10, 0)
	if _, err := ReadCIFAR10(bytes.NewReader(bad), "x"); err == nil || !strings.Contains(err.Error(), "label 10") {
		t.Fatalf("bad label: %v", err)
	}
	if _, err := ReadCIFAR10(bytes.NewReader(nil), "x"); err == nil {
		t.Fatal("empty input accepted")
	}
	if _, err := LoadCIFAR10(); err == nil {
		t.Fatal("no files accepted")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFashionMNISTInstalled checks the real data set when Debian's
// dataset-fashion-mnist package is installed.
func TestFashionMNISTInstalled(t *testing.T) {
	if _, err := os.Stat(FashionMNISTDir); err != nil {
		t.Skip("dataset-fashion-mnist not installed")
	}
	train, test, err := LoadFashionMNIST(FashionMNISTDir)
	if err != nil {
		t.Fatal(err)
	}
	if train.N != 60000 || test.N != 10000 || train.Height != 28 || train.Width != 28 {
		t.Fatalf("train %d×%d×%d, test %d", train.N, train.Height, train.Width, test.N)
	}
	counts := make([]int, 10)
	for _, l := range train.Labels {
		counts[l]++
	}
	for c, k := range counts {
		if k != 6000 {
			t.Errorf("class %d has %d training images, want 6000", c, k)
		}
	}
}

func TestLoadFashionMNISTMissingDir(t *testing.T) {
	if _, _, err := LoadFashionMNIST(t.TempDir()); err == nil || !strings.Contains(err.Error(), "dataset-fashion-mnist") {
		t.Fatalf("missing dir: %v", err)
	}
}

// TestSubsetInconsistent checks that Subset refuses an Images whose fields
// disagree, as a hand-built one may, where it panicked on a slice bound or
// an index.
func TestSubsetInconsistent(t *testing.T) {
	good := func() *Images {
		return &Images{N: 3, Height: 1, Width: 2, Channels: 1, Pixels: make([]float64, 6), Labels: []int{0, 1, 0}, Classes: 2}
	}
	if _, err := good().Subset([]int{2, 1}); err != nil {
		t.Fatalf("consistent images: %v", err)
	}
	if sub, err := (&Images{Height: 32, Width: 32, Channels: 3}).Subset(nil); err != nil || sub.N != 0 {
		t.Errorf("no images: %v, %+v", err, sub)
	}
	for name, edit := range map[string]func(*Images){
		"short pixels":       func(im *Images) { im.Pixels = im.Pixels[:4] },
		"long pixels":        func(im *Images) { im.Pixels = make([]float64, 7) },
		"short labels":       func(im *Images) { im.Labels = im.Labels[:1] },
		"long labels":        func(im *Images) { im.Labels = append(im.Labels, 1) },
		"more images":        func(im *Images) { im.N = 4 },
		"negative N":         func(im *Images) { im.N = -1 },
		"zero height":        func(im *Images) { im.Height = 0 },
		"negative channels":  func(im *Images) { im.Channels = -1 },
		"overflowing size":   func(im *Images) { im.Height, im.Width = 1<<40, 1<<40 },
		"overflowing pixels": func(im *Images) { im.N, im.Width = 1<<62, 4 },
	} {
		im := good()
		edit(im)
		if _, err := im.Subset([]int{2}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestReadIDXClaimsMoreThanItHolds: a header claiming 2³¹ elements in
// front of a few bytes is refused as truncated without allocating what the
// header claims; data larger than the first buffer (16 MiB) is read whole.
func TestReadIDXClaimsMoreThanItHolds(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadIDX(bytes.NewReader(idxBytes([]int{1 << 16, 1 << 15}, make([]byte, 10))), "liar")
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("err %v, want truncated", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("allocated %d MiB for a 26-byte file", got>>20)
	}
	data := make([]byte, 5*(1<<22+3)) // 20 MiB + 15
	for i := range data {
		data[i] = byte(i * 31)
	}
	x, err := ReadIDX(bytes.NewReader(idxBytes([]int{len(data) / 5, 5}, data)), "big")
	if err != nil || !bytes.Equal(x.Data, data) {
		t.Errorf("20 MiB file: err %v, data equal %v", err, err == nil && bytes.Equal(x.Data, data))
	}
}

// TestMatrixAndFloatLabels checks the conversions to what convgp's
// models take: the matrix shares the pixels, one image per row, and the
// labels become float64 class indices.
func TestMatrixAndFloatLabels(t *testing.T) {
	im := &Images{N: 3, Height: 1, Width: 2, Channels: 2, Pixels: []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 0.5},
		Labels: []int{2, 0, 1}, Classes: 3}
	x, err := im.Matrix()
	if err != nil {
		t.Fatal(err)
	}
	if r, c := x.Dims(); r != 3 || c != 4 {
		t.Fatalf("matrix %d×%d, want 3×4", r, c)
	}
	for i := 0; i < im.N; i++ {
		if !slices.Equal(x.RawRowView(i), im.Image(i)) {
			t.Errorf("row %d %v, image %v", i, x.RawRowView(i), im.Image(i))
		}
	}
	im.Pixels[5] = 7
	if x.At(1, 1) != 7 {
		t.Error("the matrix does not share the pixels")
	}
	if y := im.FloatLabels(); !slices.Equal(y, []float64{2, 0, 1}) {
		t.Errorf("FloatLabels %v", y)
	}
	if y := (&Images{N: 3}).FloatLabels(); y != nil {
		t.Errorf("FloatLabels of unlabelled images %v, want nil", y)
	}
	for name, bad := range map[string]*Images{
		"no images":    {N: 0, Height: 1, Width: 1, Channels: 1},
		"short pixels": {N: 2, Height: 1, Width: 2, Channels: 1, Pixels: make([]float64, 3)},
		"no channels":  {N: 1, Height: 1, Width: 1, Pixels: make([]float64, 1)},
	} {
		if x, err := bad.Matrix(); err == nil {
			t.Errorf("%s: matrix %v, no error", name, x)
		}
	}
}
