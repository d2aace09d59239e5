//go:build purego || noasm || !(amd64 || arm64)

package peak

func archUnits() []Unit { return nil }
