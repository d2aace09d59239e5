// Package dataset reads image data sets, labelled or not, for the
// convolutional GP models: the IDX format of MNIST and Fashion-MNIST, and the binary format
// of CIFAR-10.
//
// Images are returned as float64 pixels scaled to [0, 1], in NHWC order
// (image, row, column, channel), which is the layout package patches uses.
// Every malformed input — a wrong magic number, a truncated file, images and
// labels of different counts, a label out of range — is reported as an
// error naming the file; nothing panics on bad data.
package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"

	"gonum.org/v1/gonum/mat"
)

// Images is a batch of images, labelled or not.
type Images struct {
	// N is the number of images; Height, Width and Channels their shape.
	N, Height, Width, Channels int
	// Pixels holds N·Height·Width·Channels values in [0, 1], NHWC order.
	Pixels []float64
	// Labels holds one class index in [0, Classes) per image, or is nil
	// for unlabelled images (LoadIDXImages).
	Labels []int
	// Classes is the number of classes (0 for unlabelled images).
	Classes int
}

// ImageSize returns the number of values per image, Height·Width·Channels.
func (im *Images) ImageSize() int { return im.Height * im.Width * im.Channels }

// Image returns the pixels of image i as a sub-slice of Pixels.
func (im *Images) Image(i int) []float64 {
	s := im.ImageSize()
	return im.Pixels[i*s : (i+1)*s]
}

// Matrix returns the images as the N × ImageSize() matrix, one image per
// row, that convgp.NewDeep, Deep.Predict and Deep.Evaluate take. The
// matrix shares Pixels (nothing is copied): a change to either shows in
// the other, so standardize the pixels before or after, not both. It
// returns an error if there are no images (a matrix has at least one row)
// or if im's fields disagree, as Subset does.
func (im *Images) Matrix() (*mat.Dense, error) {
	if err := im.check(); err != nil {
		return nil, err
	}
	if im.N == 0 {
		return nil, fmt.Errorf("dataset: no images")
	}
	return mat.NewDense(im.N, im.ImageSize(), im.Pixels), nil
}

// FloatLabels returns the labels as the float64 class indices that
// Deep.Evaluate, Deep.Objective and gp/train.Fit take (a new slice), or
// nil for unlabelled images. convgp.Score takes Labels as they are.
func (im *Images) FloatLabels() []float64 {
	if im.Labels == nil {
		return nil
	}
	y := make([]float64, len(im.Labels))
	for i, l := range im.Labels {
		y[i] = float64(l)
	}
	return y
}

// Subset returns a new Images holding the images at the given indices, in
// that order. It returns an error if an index is out of range, or if im's
// fields disagree (as they may in an Images built by hand): N < 0, Height,
// Width or Channels < 1, Pixels not N·ImageSize values, or Labels neither
// nil nor N long.
func (im *Images) Subset(idx []int) (*Images, error) {
	if err := im.check(); err != nil {
		return nil, err
	}
	s := im.ImageSize()
	out := &Images{N: len(idx), Height: im.Height, Width: im.Width, Channels: im.Channels,
		Pixels: make([]float64, len(idx)*s), Classes: im.Classes}
	if im.Labels != nil {
		out.Labels = make([]int, len(idx))
	}
	for k, i := range idx {
		if i < 0 || i >= im.N {
			return nil, fmt.Errorf("dataset: subset index %d out of range [0, %d)", i, im.N)
		}
		copy(out.Pixels[k*s:(k+1)*s], im.Pixels[i*s:(i+1)*s])
		if out.Labels != nil {
			out.Labels[k] = im.Labels[i]
		}
	}
	return out, nil
}

// check returns an error if im's sizes disagree with each other or with
// the lengths of Pixels and Labels.
func (im *Images) check() error {
	s := 1
	for _, d := range [...]int{im.Height, im.Width, im.Channels} {
		if d < 1 || s > math.MaxInt/d {
			return fmt.Errorf("dataset: images of %d×%d×%d values", im.Height, im.Width, im.Channels)
		}
		s *= d
	}
	// N·s is formed only when it cannot overflow (N·s ≤ len(Pixels)).
	if im.N < 0 || (im.N > 0 && s > len(im.Pixels)/im.N) || im.N*s != len(im.Pixels) {
		return fmt.Errorf("dataset: %d images of %d×%d×%d values, but %d pixels", im.N, im.Height, im.Width, im.Channels, len(im.Pixels))
	}
	if im.Labels != nil && len(im.Labels) != im.N {
		return fmt.Errorf("dataset: %d images, but %d labels", im.N, len(im.Labels))
	}
	return nil
}

// openMaybeGzip opens path and transparently decompresses it when it starts
// with the gzip magic bytes.
func openMaybeGzip(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	br := bufio.NewReaderSize(f, 1<<16)
	magic, _ := br.Peek(2)
	if bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("dataset: %s: %w", path, err)
		}
		return struct {
			io.Reader
			io.Closer
		}{zr, closerFunc(func() error { zr.Close(); return f.Close() })}, nil
	}
	return struct {
		io.Reader
		io.Closer
	}{br, f}, nil
}

type closerFunc func() error

func (c closerFunc) Close() error { return c() }
