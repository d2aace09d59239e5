package dataset

import (
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
)

// IDX is the content of an IDX file holding unsigned bytes: its dimensions
// and its data in row-major order.
type IDX struct {
	Dims []int
	Data []byte
}

// maxIDXElements bounds the number of elements ReadIDX accepts, so that a
// corrupt header cannot make it allocate an absurd amount of memory.
const maxIDXElements = 1 << 31

// ReadIDX reads an IDX file of unsigned bytes (type code 0x08) from r. The
// name is used in error messages.
func ReadIDX(r io.Reader, name string) (*IDX, error) {
	dims, total, err := readIDXHeader(r, name)
	if err != nil {
		return nil, err
	}
	// The buffer grows with the data read, from 16 MiB, so that a header
	// claiming two billion elements in front of a few bytes (a corrupt or
	// hostile file) costs memory in proportion to the file, not to the
	// header's claim.
	data := make([]byte, 0, min(total, 1<<24))
	for len(data) < total {
		if len(data) == cap(data) {
			data = slices.Grow(data, min(cap(data), total-len(data)))
		}
		n, err := io.ReadFull(r, data[len(data):min(cap(data), total)])
		data = data[:len(data)+n]
		if err != nil {
			return nil, fmt.Errorf("dataset: %s: IDX data for dimensions %v: %w", name, dims, truncated(err))
		}
	}
	// Anything after the data means the header does not describe the file.
	// Reading on to the end also lets a compressed stream check its
	// trailer: a gzip checksum mismatch or a cut trailer shows up here.
	// What follows a complete gzip member and is not another one (zero
	// padding to a block size, say) ends the stream, as gunzip treats it.
	var extra [1]byte
	switch n, err := io.ReadAtLeast(r, extra[:], 1); {
	case n != 0:
		return nil, fmt.Errorf("dataset: %s: trailing bytes after IDX data for dimensions %v", name, dims)
	case err != io.EOF && !errors.Is(err, gzip.ErrHeader):
		return nil, fmt.Errorf("dataset: %s: after the IDX data: %w", name, truncated(err))
	}
	return &IDX{Dims: dims, Data: data}, nil
}

// WriteTo writes x to w as an IDX file of unsigned bytes, the format
// ReadIDX reads, and returns the number of bytes written. It returns an
// error, writing nothing, unless x has 1 to 255 dimensions, each below
// 2³², whose product is len(x.Data) and at most the 2³¹ elements ReadIDX
// accepts.
func (x *IDX) WriteTo(w io.Writer) (int64, error) {
	if len(x.Dims) == 0 || len(x.Dims) > 255 {
		return 0, fmt.Errorf("dataset: IDX with %d dimensions, want 1 to 255", len(x.Dims))
	}
	total := 1
	for i, d := range x.Dims {
		if d < 0 || uint64(d) > math.MaxUint32 || d != 0 && total > maxIDXElements/d {
			return 0, fmt.Errorf("dataset: IDX dimensions %v: dimension %d out of range", x.Dims, i)
		}
		total *= d
	}
	if total != len(x.Data) {
		return 0, fmt.Errorf("dataset: IDX dimensions %v hold %d elements, data has %d", x.Dims, total, len(x.Data))
	}
	hdr := make([]byte, 4, 4+4*len(x.Dims))
	hdr[2], hdr[3] = 0x08, byte(len(x.Dims))
	for _, d := range x.Dims {
		hdr = binary.BigEndian.AppendUint32(hdr, uint32(d))
	}
	n, err := w.Write(hdr)
	if err != nil {
		return int64(n), err
	}
	m, err := w.Write(x.Data)
	return int64(n + m), err
}

// readIDXHeader reads the header of an IDX file of unsigned bytes from r
// and returns its dimensions and their product, which is at most
// maxIDXElements.
func readIDXHeader(r io.Reader, name string) (dims []int, total int, err error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, 0, fmt.Errorf("dataset: %s: reading IDX header: %w", name, truncated(err))
	}
	if hdr[0] != 0 || hdr[1] != 0 {
		return nil, 0, fmt.Errorf("dataset: %s: not an IDX file (magic % x)", name, hdr)
	}
	if hdr[2] != 0x08 {
		return nil, 0, fmt.Errorf("dataset: %s: IDX element type 0x%02x is not unsigned byte (0x08)", name, hdr[2])
	}
	nd := int(hdr[3])
	if nd == 0 {
		return nil, 0, fmt.Errorf("dataset: %s: IDX file has no dimensions", name)
	}
	dims = make([]int, nd)
	total = 1
	for i := range dims {
		var d uint32
		if err := binary.Read(r, binary.BigEndian, &d); err != nil {
			return nil, 0, fmt.Errorf("dataset: %s: reading dimension %d: %w", name, i, truncated(err))
		}
		dims[i] = int(d)
		if d != 0 && total > maxIDXElements/int(d) {
			return nil, 0, fmt.Errorf("dataset: %s: IDX dimensions %v too large", name, dims[:i+1])
		}
		total *= int(d)
	}
	return dims, total, nil
}

// IDXDims reads only the header of an IDX file of unsigned bytes
// (optionally gzip-compressed) and returns its dimensions: for instance to
// check the image size before LoadIDXImages reads and converts the data.
func IDXDims(path string) ([]int, error) {
	rc, err := openMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	dims, _, err := readIDXHeader(rc, path)
	return dims, err
}

func truncated(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errors.New("file is truncated")
	}
	return err
}

// readIDXFile reads an IDX file, gzip-compressed or not.
func readIDXFile(path string) (*IDX, error) {
	rc, err := openMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return ReadIDX(rc, path)
}

// LoadIDX reads a pair of IDX files, an N×H×W image file and an N-label
// file (each optionally gzip-compressed), as in MNIST and Fashion-MNIST.
// Labels must lie in [0, classes); H and W must be at least 1.
func LoadIDX(imagesPath, labelsPath string, classes int) (*Images, error) {
	if classes < 1 || classes > 256 {
		return nil, fmt.Errorf("dataset: number of classes %d out of range [1, 256]", classes)
	}
	out, err := LoadIDXImages(imagesPath)
	if err != nil {
		return nil, err
	}
	lab, err := readIDXFile(labelsPath)
	if err != nil {
		return nil, err
	}
	if len(lab.Dims) != 1 {
		return nil, fmt.Errorf("dataset: %s: label file has %d dimensions %v, want 1", labelsPath, len(lab.Dims), lab.Dims)
	}
	if out.N != lab.Dims[0] {
		return nil, fmt.Errorf("dataset: %s has %d images but %s has %d labels", imagesPath, out.N, labelsPath, lab.Dims[0])
	}
	out.Labels, out.Classes = make([]int, out.N), classes
	for i, b := range lab.Data {
		if int(b) >= classes {
			return nil, fmt.Errorf("dataset: %s: label %d of item %d is out of range [0, %d)", labelsPath, b, i, classes)
		}
		out.Labels[i] = int(b)
	}
	return out, nil
}

// LoadIDXImages reads an N×H×W IDX image file (optionally gzip-compressed)
// without labels, for images to classify: Labels is nil and Classes 0.
// Images of zero rows or columns are an error.
func LoadIDXImages(path string) (*Images, error) {
	img, err := readIDXFile(path)
	if err != nil {
		return nil, err
	}
	if len(img.Dims) != 3 {
		return nil, fmt.Errorf("dataset: %s: image file has %d dimensions %v, want 3 (N, rows, columns)", path, len(img.Dims), img.Dims)
	}
	if img.Dims[1] < 1 || img.Dims[2] < 1 {
		return nil, fmt.Errorf("dataset: %s: image file has dimensions %v: empty images of %d rows and %d columns", path, img.Dims, img.Dims[1], img.Dims[2])
	}
	out := &Images{N: img.Dims[0], Height: img.Dims[1], Width: img.Dims[2], Channels: 1, Pixels: make([]float64, len(img.Data))}
	for i, b := range img.Data {
		out.Pixels[i] = float64(b) / 255
	}
	return out, nil
}

// FashionMNISTDir is where Debian's dataset-fashion-mnist package installs
// the data set.
const FashionMNISTDir = "/usr/share/datasets/fashion-mnist"

// LoadFashionMNIST reads the Fashion-MNIST training and test sets from dir,
// which holds the four files train-images-idx3-ubyte[.gz],
// train-labels-idx1-ubyte[.gz], t10k-images-idx3-ubyte[.gz] and
// t10k-labels-idx1-ubyte[.gz] (as installed by `apt-get install
// dataset-fashion-mnist` under FashionMNISTDir).
func LoadFashionMNIST(dir string) (train, test *Images, err error) {
	find := func(base string) (string, error) {
		for _, p := range []string{base + ".gz", base} {
			if fileExists(filepath.Join(dir, p)) {
				return filepath.Join(dir, p), nil
			}
		}
		return "", fmt.Errorf("dataset: %s not found in %s (install Debian's dataset-fashion-mnist or pass the directory holding the IDX files)", base, dir)
	}
	var paths [4]string
	for i, base := range []string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"} {
		if paths[i], err = find(base); err != nil {
			return nil, nil, err
		}
	}
	if train, err = LoadIDX(paths[0], paths[1], 10); err != nil {
		return nil, nil, err
	}
	if test, err = LoadIDX(paths[2], paths[3], 10); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}
