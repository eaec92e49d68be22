package inventory

import "context"

func readS3Parquet(ctx context.Context, r *Report, f reportFile, yield func(Object, error) bool) bool {
	yield(Object{}, ErrUnsupported)
	return false
}
