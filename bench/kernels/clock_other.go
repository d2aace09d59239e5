//go:build !linux

package main

import (
	"errors"
	"time"
)

// threadCPUTime is only implemented on Linux.
func threadCPUTime() (time.Duration, error) {
	return 0, errors.New("a thread's CPU time is only read on Linux")
}
