package metarange

import (
	"encoding/hex"
	"sync"
)

// An id is a metarange or range ID: lakeFS names its SSTables by the
// SHA-256 of their contents, 64 lower-case hex digits.
type id [32]byte

// parseID reads a table ID. Anything else is refused, so that a name read
// from a table can never reach outside the storage prefix.
func parseID(s []byte) (id, bool) {
	var v id
	if len(s) != 2*len(v) {
		return v, false
	}
	for i := range v {
		hi, lo := hexDigit[s[2*i]], hexDigit[s[2*i+1]]
		if hi == invalidDigit || lo == invalidDigit {
			return id{}, false
		}
		v[i] = hi<<4 | lo
	}
	return v, true
}

// hexDigit maps a lower-case hex digit to its value, anything else to
// invalidDigit.
var hexDigit = func() (t [256]byte) {
	for i := range t {
		t[i] = invalidDigit
	}
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c - '0'
	}
	for c := byte('a'); c <= 'f'; c++ {
		t[c] = c - 'a' + 10
	}
	return t
}()

const invalidDigit = 0xff

func (v id) String() string { return hex.EncodeToString(v[:]) }

// idSet is the set of the IDs seen, safe for concurrent use: 32 bytes an ID
// plus the map's overhead, about 50 bytes, and never more than max IDs.
type idSet struct {
	mu  sync.Mutex
	max int
	m   map[id]struct{}
}

func newIDSet(maxIDs int) *idSet {
	return &idSet{max: maxIDs, m: make(map[id]struct{})}
}

// add adds v and reports whether it was new; full means v was new but the
// set already held max IDs, so it was not added.
func (s *idSet) add(v id) (added, full bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[v]; ok {
		return false, false
	}
	if len(s.m) >= s.max {
		return false, true
	}
	s.m[v] = struct{}{}
	return true, false
}

// len returns the number of IDs in the set.
func (s *idSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}
