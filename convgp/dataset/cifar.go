package dataset

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// CIFAR-10 binary layout: each record is one label byte followed by a 32×32
// red plane, a green plane and a blue plane, each row-major.
const (
	cifarSide     = 32
	cifarChannels = 3
	cifarClasses  = 10
	cifarRecord   = 1 + cifarSide*cifarSide*cifarChannels
)

// ReadCIFAR10 reads CIFAR-10 records in the binary format (data_batch_*.bin,
// test_batch.bin) from r until end of input. A partial trailing record or a
// label above 9 is an error naming name and the record.
func ReadCIFAR10(r io.Reader, name string) (*Images, error) {
	out := &Images{Height: cifarSide, Width: cifarSide, Channels: cifarChannels, Classes: cifarClasses}
	rec := make([]byte, cifarRecord)
	const plane = cifarSide * cifarSide
	for {
		n, err := io.ReadFull(r, rec)
		if errors.Is(err, io.EOF) && n == 0 {
			break
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("dataset: %s: record %d is truncated (%d of %d bytes)", name, out.N, n, cifarRecord)
			}
			return nil, fmt.Errorf("dataset: %s: %w", name, err)
		}
		if rec[0] >= cifarClasses {
			return nil, fmt.Errorf("dataset: %s: record %d has label %d, want 0..%d", name, out.N, rec[0], cifarClasses-1)
		}
		out.Labels = append(out.Labels, int(rec[0]))
		px := rec[1:]
		// Planar (CHW) to interleaved (HWC).
		for p := 0; p < plane; p++ {
			out.Pixels = append(out.Pixels,
				float64(px[p])/255, float64(px[plane+p])/255, float64(px[2*plane+p])/255)
		}
		out.N++
	}
	if out.N == 0 {
		return nil, fmt.Errorf("dataset: %s: no CIFAR-10 records", name)
	}
	return out, nil
}

// LoadCIFAR10 reads and concatenates CIFAR-10 binary batch files, each
// optionally gzip-compressed.
func LoadCIFAR10(paths ...string) (*Images, error) {
	if len(paths) == 0 {
		return nil, errors.New("dataset: LoadCIFAR10 needs at least one file")
	}
	var all *Images
	for _, p := range paths {
		rc, err := openMaybeGzip(p)
		if err != nil {
			return nil, err
		}
		im, err := ReadCIFAR10(rc, p)
		rc.Close()
		if err != nil {
			return nil, err
		}
		if all == nil {
			all = im
			continue
		}
		all.N += im.N
		all.Pixels = append(all.Pixels, im.Pixels...)
		all.Labels = append(all.Labels, im.Labels...)
	}
	return all, nil
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
