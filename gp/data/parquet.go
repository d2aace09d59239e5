package data

import "fmt"

// ParquetShard placeholder replaced below.
func ParquetShard(path string, opts Options) (Shard, error) {
	return nil, fmt.Errorf("data: %s: Parquet not available", path)
}
