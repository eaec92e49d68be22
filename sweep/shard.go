package sweep

import "hash/fnv"

// WithShard restricts Mark to shard index of count (see the package
// documentation, "Sharding a mark across machines"), so that count Marks,
// each with its own run ID and on its own machine if need be, together mark
// what one Mark would. The slices under the data folder are divided by
// SliceShard(name, count); shard 0 also lists the top-level objects of the
// old flat layout, the loose objects directly under the data folder, and the
// folders there that are not slices. Every shard reads the whole keep set
// (Inputs) and lists the data folder's names.
//
// count 1, and the zero value WithShard(0, 0), mean no sharding. A negative
// count, or an index outside [0, count), is an error wrapping
// ErrInvalidInput. A sharded run is always clean: WithPrevious is ignored
// (Summary.CleanReason says so), and it leaves no records for an optimized
// run to start from.
func WithShard(index, count int) MarkOption {
	return markOnly("Shard", func(c *config) {
		if count == 0 && index == 0 {
			c.shardIndex, c.shardCount = 0, 0
			return
		}
		if count < 0 || index < 0 || index >= count {
			c.invalid("shard %d of %d: want 0 <= index < count", index, count)
			return
		}
		if count == 1 {
			count = 0
		}
		c.shardIndex, c.shardCount = index, count
	})
}

// SliceShard returns the shard, in [0, count), that lists the slice named
// name (the folder's name under the data folder, without '/'): the 64-bit
// FNV-1a hash of the name's bytes (offset basis 14695981039346656037,
// prime 1099511628211), as an unsigned integer, modulo count. It is 0 when
// count is below 2. The function is part of the format: a host in any
// language can tell which shard marks a slice.
func SliceShard(name string, count int) int {
	if count < 2 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	return int(h.Sum64() % uint64(count))
}

// sharded reports whether Mark runs one shard of several.
func (c *config) sharded() bool { return c.shardCount > 1 }

// ownsSlice reports whether this shard lists the slice name.
func (c *config) ownsSlice(name string) bool {
	return !c.sharded() || SliceShard(name, c.shardCount) == c.shardIndex
}

// ownsRest reports whether this shard lists what is not a slice: the
// top-level objects, the loose objects under the data folder, and the
// folders there that are not slices. Shard 0 does.
func (c *config) ownsRest() bool { return c.shardIndex == 0 }
