package modelfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"math"
	"sort"
	"strconv"
)

// modelDigestVersion is the first format version with model_sha256.
const modelDigestVersion = 3

// uncheckedBefore returns Bundle.Unchecked for a file of a version before
// modelDigestVersion, whose only digest, params_sha256, covers the
// parameter vector alone.
func uncheckedBefore(version int) string {
	return fmt.Sprintf("format version %d: its checksum covers the parameters only, so the standardization, "+
		"the kernel family, the likelihood's settings and the parameterization are unchecked (save the model again to check them)", version)
}

// notDigested are the top-level fields model_sha256 leaves out: the
// digests themselves and meta, which does not affect predictions.
var notDigested = []string{"model_sha256", "params_sha256", "meta"}

// modelDigest returns model_sha256 of the JSON document buf: the SHA-256
// of the canonical encoding (see canonical) of the document without the
// fields of notDigested. It covers everything that affects a prediction,
// the standardization included, and is independent of whitespace, key
// order and the spelling of numbers, so that any JSON writer reproduces it.
// params must be the document's "params" as decoded into float64s: the
// largest field is encoded from them rather than decoded a second time.
func modelDigest(buf []byte, params []float64) (string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(buf, &top); err != nil {
		return "", err
	}
	for _, k := range notDigested {
		delete(top, k)
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	var n [8]byte
	putLen := func(tag string, l int) {
		h.Write([]byte(tag))
		binary.LittleEndian.PutUint64(n[:], uint64(l))
		h.Write(n[:])
	}
	putLen("o", len(keys))
	for _, k := range keys {
		putLen("s", len(k))
		h.Write([]byte(k))
		if k == "params" && params != nil {
			putLen("a", len(params))
			for _, v := range params {
				h.Write([]byte("d"))
				binary.LittleEndian.PutUint64(n[:], math.Float64bits(v))
				h.Write(n[:])
			}
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(top[k]))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return "", err
		}
		if err := canonical(h, v); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// canonical writes the canonical encoding of a decoded JSON value v to h:
// null as "n"; true and false as "t" and "f"; a number as "d" and its
// float64 (integers included) in little-endian binary64; a string as "s",
// its UTF-8 length as a little-endian uint64, and its bytes; an array as
// "a", its length as uint64 and its elements; an object as "o", its number
// of keys as uint64, then each key (as a string) and its value in the byte
// order of the keys.
func canonical(h hash.Hash, v any) error {
	var n [8]byte
	putLen := func(tag string, l int) {
		h.Write([]byte(tag))
		binary.LittleEndian.PutUint64(n[:], uint64(l))
		h.Write(n[:])
	}
	switch v := v.(type) {
	case nil:
		h.Write([]byte("n"))
	case bool:
		if v {
			h.Write([]byte("t"))
		} else {
			h.Write([]byte("f"))
		}
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil || math.IsInf(f, 0) {
			return fmt.Errorf("number %s out of float64 range", v)
		}
		h.Write([]byte("d"))
		binary.LittleEndian.PutUint64(n[:], math.Float64bits(f))
		h.Write(n[:])
	case string:
		putLen("s", len(v))
		h.Write([]byte(v))
	case []any:
		putLen("a", len(v))
		for _, e := range v {
			if err := canonical(h, e); err != nil {
				return err
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		putLen("o", len(v))
		for _, k := range keys {
			putLen("s", len(k))
			h.Write([]byte(k))
			if err := canonical(h, v[k]); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unexpected JSON value of type %T", v)
	}
	return nil
}

// checkModelDigest checks the file's model_sha256 against its content buf
// for a file of version modelDigestVersion or later, which must have one,
// and returns Bundle.Unchecked for the file's version.
func (f *file) checkModelDigest(buf []byte) (string, error) {
	if f.Version < modelDigestVersion {
		if f.ModelSHA256 != "" {
			return "", bad("a version %d file has no model_sha256", f.Version)
		}
		return uncheckedBefore(f.Version), nil
	}
	if f.ModelSHA256 == "" {
		return "", bad("missing model_sha256")
	}
	got, err := modelDigest(buf, f.Params)
	if err != nil {
		return "", bad("model_sha256: %v", err)
	}
	if got != f.ModelSHA256 {
		return "", bad("model_sha256 does not match the file (file corrupt or edited)")
	}
	return "", nil
}
