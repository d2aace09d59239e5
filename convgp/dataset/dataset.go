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
	"os"
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

// Subset returns a new Images holding the images at the given indices, in
// that order. It returns an error if an index is out of range.
func (im *Images) Subset(idx []int) (*Images, error) {
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
