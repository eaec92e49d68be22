package layout

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"unsafe"
)

// Positive identification: which listed keys a collector may judge at all,
// and which folders are another repository's.

// RecognizerRules is the version of the built-in recognition rules: what
// Recognize and InSlice say of every key. It is bumped whenever they change
// a verdict, so that a record of keys recognized by one version (an
// optimized run's previous keep index) is trusted only by the same version:
// a run started from records of another version checks each carried key
// again. A test computes a digest of the rules' verdicts on a fixed corpus
// and fails when it differs from the digest recorded for this version
// (testdata/recognizer-rules.txt).
const RecognizerRules = 1

// Recognizer tells the keys a collector may judge from the rest: a key
// under one of Include is recognized whatever its shape; else Custom, when
// set, decides; else the shapes of Recognize under the data prefix Data
// (without its '/'). Its methods allocate nothing and are safe for
// concurrent use.
type Recognizer struct {
	Data    string
	Custom  func(string) bool
	Include []string
}

// OK reports whether key is recognized.
func (r Recognizer) OK(key string) bool {
	if known, decided := r.byOption(key); decided {
		return known
	}
	return Recognize(key, r.Data) != Unrecognized
}

// OKInSlice is OK for a key in a slice's folder, whose last element starts
// at at: the slice's name is not decoded again.
func (r Recognizer) OKInSlice(key string, at int) bool {
	if known, decided := r.byOption(key); decided {
		return known
	}
	return InSlice(key[at:]) != Unrecognized
}

// OKBytes is OK for a key in a buffer; Custom must not keep the string it
// is given (its bytes may be reused after it returns).
func (r Recognizer) OKBytes(key []byte) bool {
	return r.OK(unsafe.String(unsafe.SliceData(key), len(key)))
}

// byOption is what Include and Custom say of key; decided is false when
// neither applies and the shapes decide.
func (r Recognizer) byOption(key string) (known, decided bool) {
	for _, p := range r.Include {
		if strings.HasPrefix(key, p) {
			return true, true
		}
	}
	if r.Custom != nil {
		return r.Custom(key), true
	}
	return false, false
}

// Walls: the folders of other repositories.

// MaxWalls bounds the walls a Walls remembers one by one; past it, a wall
// is the whole folder under the data folder it was found in, a set bounded
// by the list of folders.
const MaxWalls = 10_000

// Walls collects the folders under the data folder that hold another
// repository's storage folder (StoragePrefix, or the repository's own
// storage prefix when it is another): its walls. Safe for concurrent use.
type Walls struct {
	markers []string // "/_lakefs/" and "/<storage prefix>/"
	dataLen int      // len(data prefix): markers are looked for after it

	mu     sync.Mutex
	set    map[string]struct{}
	coarse bool
}

// NewWalls returns an empty set of walls for a namespace whose data prefix
// (without its '/') and storage prefix are given.
func NewWalls(dataPrefix, storagePrefix string) *Walls {
	w := &Walls{markers: []string{"/" + StoragePrefix + "/"}, dataLen: len(dataPrefix), set: map[string]struct{}{}}
	if storagePrefix != StoragePrefix {
		w.markers = append(w.markers, "/"+storagePrefix+"/")
	}
	return w
}

// Markers returns the folder names, each between '/'s, whose presence
// below a folder makes it a wall. The caller must not change the slice.
func (w *Walls) Markers() []string { return w.markers }

// Of returns the wall key marks, a folder prefix ending in '/' under which
// another repository keeps its storage folder, when key (under the data
// folder) has one. It allocates nothing.
func (w *Walls) Of(key string) (string, bool) {
	if len(key) <= w.dataLen {
		return "", false
	}
	rest := key[w.dataLen:]
	at := -1
	for _, m := range w.markers {
		if i := strings.Index(rest, m); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at < 0 {
		return "", false
	}
	return key[:w.dataLen+at+1], true
}

// Add records wall, found while listing folder.
func (w *Walls) Add(wall, folder string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.set) >= MaxWalls {
		w.coarse = true
		if len(folder) < len(wall) {
			wall = folder
		}
	}
	w.set[wall] = struct{}{}
}

// Sorted returns the walls, sorted and prefix-free: a wall under another is
// dropped, so that the greatest wall not above a key is the only one that
// can hold it.
func (w *Walls) Sorted() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	all := make([]string, 0, len(w.set))
	for k := range w.set {
		all = append(all, k)
	}
	slices.Sort(all)
	out := all[:0]
	for _, k := range all {
		if len(out) > 0 && strings.HasPrefix(k, out[len(out)-1]) {
			continue
		}
		out = append(out, k)
	}
	return out
}

// WallCursor tells, for ascending keys, whether a key is under one of
// sorted, prefix-free walls (Walls.Sorted). Not safe for concurrent use.
type WallCursor struct {
	walls []string
	i     int // walls[i] is the greatest wall not above the last key; -1: none
}

// NewWallCursor returns a cursor over walls, before the first key.
func NewWallCursor(walls []string) *WallCursor { return &WallCursor{walls: walls, i: -1} }

// Walled reports whether key, not below the last key asked about, is under
// a wall. It allocates nothing.
func (c *WallCursor) Walled(key []byte) bool {
	if len(c.walls) == 0 {
		return false
	}
	for c.i+1 < len(c.walls) && c.walls[c.i+1] <= string(key) {
		c.i++
	}
	return c.i >= 0 && bytes.HasPrefix(key, []byte(c.walls[c.i]))
}
