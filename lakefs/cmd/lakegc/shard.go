package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// The environment of a pod of a Kubernetes Indexed Job: Kubernetes sets
// envCompletionIndex to the pod's index; the manifest sets envCompletions to
// the Job's spec.completions (Kubernetes does not, and the downward API
// cannot read it).
const (
	envCompletionIndex = "JOB_COMPLETION_INDEX"
	envCompletions     = "JOB_COMPLETIONS"
)

// maxShards bounds the shard count: beyond it shards hold hardly a slice
// each, and a typo such as 0/1000000000 is refused.
const maxShards = 100000

// shardSpec says which shard of a sharded mark a run is; count 0 is no
// sharding.
type shardSpec struct{ index, count int }

// resolveShard decides the run's shard from --shard's value flag ("" when
// not given) and the Indexed Job's environment. Either alone gives the
// shard; both must agree; an index without a count, a count without an
// index, and a value that is not "i/n" with 0 <= i < n are errors.
func resolveShard(flag string, getenv func(string) string) (shardSpec, error) {
	var fromFlag, fromEnv *shardSpec
	if flag != "" {
		i, n, ok := strings.Cut(flag, "/")
		if !ok {
			return shardSpec{}, fmt.Errorf("--shard %q: want INDEX/COUNT, such as 0/4", flag)
		}
		s, err := newShard(i, n)
		if err != nil {
			return shardSpec{}, fmt.Errorf("--shard %q: %w", flag, err)
		}
		fromFlag = &s
	}
	index, count := getenv(envCompletionIndex), getenv(envCompletions)
	switch {
	case index != "" && count == "" && fromFlag == nil:
		return shardSpec{}, fmt.Errorf("%s is %q but %s is not set: set it in the Job's manifest to its spec.completions, or give --shard INDEX/COUNT", envCompletionIndex, index, envCompletions)
	case index == "" && count != "":
		return shardSpec{}, fmt.Errorf("%s is %q but %s is not set: is the Job's completionMode Indexed?", envCompletions, count, envCompletionIndex)
	case index != "" && count != "":
		s, err := newShard(index, count)
		if err != nil {
			return shardSpec{}, fmt.Errorf("%s=%q, %s=%q: %w", envCompletionIndex, index, envCompletions, count, err)
		}
		fromEnv = &s
	case index != "":
		// Only the index, beside --shard: it must be the flag's.
		i, err := number(index)
		if err != nil {
			return shardSpec{}, fmt.Errorf("%s %q: %w", envCompletionIndex, index, err)
		}
		fromEnv = &shardSpec{i, fromFlag.count}
	}
	switch {
	case fromFlag != nil && fromEnv != nil && *fromFlag != *fromEnv:
		return shardSpec{}, fmt.Errorf("--shard %s conflicts with %s=%q, %s=%q", flag, envCompletionIndex, index, envCompletions, count)
	case fromFlag != nil:
		return *fromFlag, nil
	case fromEnv != nil:
		return *fromEnv, nil
	}
	return shardSpec{}, nil
}

// newShard makes the shard index of count from their decimal spellings.
func newShard(index, count string) (shardSpec, error) {
	i, err := number(index)
	if err != nil {
		return shardSpec{}, fmt.Errorf("index: %w", err)
	}
	n, err := number(count)
	if err != nil {
		return shardSpec{}, fmt.Errorf("count: %w", err)
	}
	switch {
	case n == 0:
		return shardSpec{}, fmt.Errorf("the count is 0: want at least 1 shard")
	case n > maxShards:
		return shardSpec{}, fmt.Errorf("the count %d is above %d", n, maxShards)
	case i >= n:
		return shardSpec{}, fmt.Errorf("index %d is not below the count %d (indexes count from 0)", i, n)
	}
	return shardSpec{i, n}, nil
}

// number parses a decimal number of digits only: no sign, no space.
func number(s string) (int, error) {
	if s == "" || len(s) > 9 || strings.Trim(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a number from 0 to 999999999", s)
	}
	return strconv.Atoi(s)
}

// setFlag reports whether the flag name was given on the command line.
func setFlag(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
