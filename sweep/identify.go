package sweep

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/lakegc/lakegc/internal/layout"
	"gocloud.dev/blob"
)

// Positive identification: Mark marks only what it recognizes as the
// repository's own (see the package documentation, "What is collected").

// DefaultRecognizer returns the recognizer Mark and Sweep use unless
// WithRecognizer replaces it: true for the keys of the shapes lakeFS and
// this module's pathprovider write in a namespace whose data folder is
// dataPrefix ("" for DefaultDataPrefix) — "<data>/<slice>/<xid>", a linked
// object's "<data>/<slice>/<xid>,<signature>", a top-level 32-digit
// lowercase hex name (the flat layout before lakeFS v0.86), and the early
// linked uploads "<data>/<staging token>/<nanoid>".
// A host whose writer uses other shapes can call it from its own
// recognizer. The function allocates nothing and is safe for concurrent
// use.
func DefaultRecognizer(dataPrefix string) func(key string) bool {
	if dataPrefix == "" {
		dataPrefix = DefaultDataPrefix
	}
	return func(key string) bool { return layout.Recognize(key, dataPrefix) != layout.Unrecognized }
}

// WithRecognizer replaces the recognizer of the keys Mark may mark and Sweep
// may delete (nil: DefaultRecognizer of the data prefix): a listed object
// whose key it does not accept is unrecognized, counted and reported but
// never a candidate, and Sweep refuses such a candidate. It is called from
// several goroutines at once, with keys relative to the namespace, and must
// not keep the string it is given (its bytes may be reused after it
// returns). A host whose pathprovider writes other shapes declares them
// here; WithInclude adds prefixes on top of either recognizer.
func WithRecognizer(f func(key string) bool) Option {
	return option("Recognizer", func(c *config) { c.recognize = f })
}

// WithInclude makes every key under one of prefixes recognized, whatever
// its shape: the operator's explicit word that objects there are the
// repository's own, such as the files a host wrote under the data folder in
// another layout. Mark lists only the top level and the data folder, so a
// prefix elsewhere changes nothing there. A prefix must be non-empty, must
// not start with '/' or be a full URI, and must neither lie under the
// storage prefix nor hold it (ErrInvalidInput). Calls add up; duplicates
// are dropped.
func WithInclude(prefixes ...string) Option {
	return option("Include", func(c *config) { c.include = append(c.include, prefixes...) })
}

// checkInclude validates the include prefixes against the storage prefix,
// and sorts and deduplicates them.
func (c *config) checkInclude() error {
	for _, p := range c.include {
		st := c.storagePrefix + "/"
		switch {
		case p == "", p[0] == '/', fullURI(p):
			return fmt.Errorf("%w: include prefix %q must be a non-empty key prefix relative to the namespace", ErrInvalidInput, p)
		case strings.HasPrefix(p, st), strings.HasPrefix(st, p):
			return fmt.Errorf("%w: include prefix %q overlaps the storage prefix %q", ErrInvalidInput, p, c.storagePrefix)
		}
	}
	slices.Sort(c.include)
	c.include = slices.Compact(c.include)
	return nil
}

// recognizer is the layout's Recognizer of Mark's and Sweep's options.
func (c *config) recognizer() layout.Recognizer {
	return layout.Recognizer{Data: c.dataPrefix, Custom: c.recognize, Include: c.include}
}

// Canary is the plausibility check Mark makes before it writes its
// candidates (WithCanary). Mark fails with ErrImplausibleMark, leaving no
// candidates, when either
//
//   - rule A: of the distinct keep keys that this run could have listed
//     (recognized keys at the top level or under the data folder, outside
//     the slices started at or after the cutoff, and in this shard's
//     slices) and that are not young listed objects, at least MinKeep, the
//     listing found fewer than MinFound (a fraction) older than the cutoff:
//     the keep set and the namespace do not match (a bucket rooted at
//     another folder, inputs of another repository or spelled another
//     way); or
//   - rule B: the candidates (those a CandidateCheck spared included: the
//     keep set did not hold them) are at least MaxMarked (a fraction) of the
//     objects judged against the keep set (the recognized objects listed
//     older than the cutoff, outside walls), while the keep set holds at
//     least MinKeep keys, other than young listed ones, that this run could
//     have found or that no run lists (outside the top level and the data
//     folder: a keep set spelled with another prefix). The unrecognized
//     keys of the top level and the data folder (import sources there) and
//     the keys of other shards' slices and of slices newer than the cutoff
//     do not count.
//
// Young listed objects count in neither rule: they join the keep set
// whatever the inputs say, so an active namespace that is not the inputs'
// would otherwise look found (rule A) or not nearly all marked (rule B).
//
// Keys the keep set holds for addresses outside the namespace (the tails a
// host keeps in case they name this namespace's objects in another
// spelling) do count: the canary cannot tell them from the rest. A
// repository nearly all of whose inputs are imports from another lakeFS
// repository's namespace, or from objects named by hex UUIDs, trips rule A:
// its operator lowers MinFound for it.
//
// A zero field takes its default: MinKeep DefaultCanaryMinKeep, MinFound
// DefaultCanaryMinFound, MaxMarked DefaultCanaryMaxMarked. MaxMarked 1 (or
// more) turns rule B off; a tiny MinFound leaves rule A only for a listing
// that found none of the keep set; Off turns the canary off. A repository
// that really lost 99 % of its old objects to garbage at once (a dropped
// table, a first run after heavy compaction) can trip rule B: its operator
// raises MaxMarked, or turns the canary off, for that run.
type Canary struct {
	MinKeep   int64   // the least keep set either rule judges
	MinFound  float64 // rule A: the least fraction of the keep set in scope the listing must find
	MaxMarked float64 // rule B: the fraction of the recognized listed objects the candidates must stay below
	Off       bool    // no canary at all
}

// Defaults of the Canary.
const (
	DefaultCanaryMinKeep   = 1000
	DefaultCanaryMinFound  = 0.01
	DefaultCanaryMaxMarked = 0.99
)

// WithCanary sets the plausibility check Mark makes before it writes its
// candidates (the zero Canary: the defaults); see Canary. A negative
// MinKeep, a MinFound above 1, or a fraction that is negative or NaN, is an
// error wrapping
// ErrInvalidInput.
func WithCanary(k Canary) MarkOption {
	return markOnly("Canary", func(c *config) {
		if k.MinKeep < 0 || !(k.MinFound >= 0 && k.MinFound <= 1) || !(k.MaxMarked >= 0) {
			c.invalid("canary %+v", k)
			return
		}
		if k.MinKeep == 0 {
			k.MinKeep = DefaultCanaryMinKeep
		}
		if k.MinFound == 0 {
			k.MinFound = DefaultCanaryMinFound
		}
		if k.MaxMarked == 0 {
			k.MaxMarked = DefaultCanaryMaxMarked
		}
		c.canary = k
	})
}

func defaultCanary() Canary {
	return Canary{MinKeep: DefaultCanaryMinKeep, MinFound: DefaultCanaryMinFound, MaxMarked: DefaultCanaryMaxMarked}
}

// canaryCount counts, in the join, what the canary judges. Not safe for
// concurrent use: the join is one goroutine.
type canaryCount struct {
	rec          layout.Recognizer
	data         string // with '/'
	cutoff       time.Time
	cfg          *config
	keep         int64 // distinct keep keys
	inScope      int64 // of which recognized where this run lists
	outside      int64 // of which outside what any run lists
	matched      int64 // of which listed and older than the cutoff
	folder       []byte
	folderIn     bool
	folderOthers bool
	folderSlice  bool
	folderSeen   bool
}

func newCanaryCount(cfg *config, cutoff time.Time) *canaryCount {
	return &canaryCount{rec: cfg.recognizer(), data: cfg.dataPrefix + "/", cutoff: cutoff, cfg: cfg}
}

// keepKey counts one keep key; the keep stream holds each once. The folder
// of the last key is cached: the keep keys come folder after folder, and
// its slice name is decoded once. recognized says the recognizer is known
// to accept k (a key carried from the previous run's records, which hold
// only keys a recognizer of the same rules accepted, or checked again).
func (c *canaryCount) keepKey(k []byte, recognized bool) {
	c.keep++
	// listed: this run lists where k lies; others: another shard's slice,
	// or a slice newer than the cutoff.
	var listed, others bool
	switch {
	case c.folderSeen && bytes.HasPrefix(k, c.folder) && len(k) > len(c.folder):
		listed, others = c.folderIn, c.folderOthers
	case bytes.HasPrefix(k, []byte(c.data)):
		rest := k[len(c.data):]
		i := bytes.IndexByte(rest, '/')
		if i < 0 {
			listed, others = c.cfg.ownsRest(), !c.cfg.ownsRest()
			break
		}
		name := rest[:i]
		listed = c.cfg.ownsRest()
		t, slice := layout.SliceTime(string(name))
		if slice {
			listed = t.Before(c.cutoff) && c.cfg.ownsSlice(string(name))
		}
		others = !listed
		c.folder = append(c.folder[:0], k[:len(c.data)+i+1]...)
		c.folderIn, c.folderOthers, c.folderSlice, c.folderSeen = listed, others, slice, true
	case bytes.IndexByte(k, '/') < 0:
		listed, others = c.cfg.ownsRest(), !c.cfg.ownsRest()
	}
	rec := listed && recognized
	if listed && !rec {
		if c.folderSeen && c.folderSlice && len(k) > len(c.folder) && bytes.HasPrefix(k, c.folder) {
			rec = c.rec.OKInSlice(unsafe.String(unsafe.SliceData(k), len(k)), len(c.folder))
		} else {
			rec = c.rec.OKBytes(k)
		}
	}
	switch {
	case rec:
		c.inScope++
	case !listed && !others:
		c.outside++
	}
}

// check returns ErrImplausibleMark when the mark is implausible; young is
// the number of young listed objects, kept, walled and marked the judged
// ones. Every young listed key joins the keep stream and is counted in
// inScope, and none is matched: they are taken out of both rules.
func (c *canaryCount) check(k Canary, young, kept, walled, marked int64) error {
	if k.Off {
		return nil
	}
	// The keep keys in scope that are not young listed objects; the listing
	// found matched of them, older than the cutoff. (A store that lists a
	// key twice counts it twice in young: judged errs low, and no key is
	// found that was not.)
	judged := max(c.inScope-young, 0)
	if judged >= k.MinKeep && float64(c.matched) < k.MinFound*float64(judged) {
		return fmt.Errorf("%w: the keep set names %d keys this run could list other than young objects, and the listing found %d of them (%.2f %%, below %.2f %%): is the bucket rooted at the namespace, and are the inputs this namespace's? (imports from another lakeFS namespace count as not found: see Canary)",
			ErrImplausibleMark, judged, c.matched, pct(c.matched, judged), 100*k.MinFound)
	}
	// Young and walled objects are neither kept by the inputs nor marked:
	// the ratio is over the objects the keep set judged.
	listed := kept + marked
	if inputs := c.inScope + c.outside - young; inputs >= k.MinKeep && k.MaxMarked < 1 && marked > 0 && float64(marked) >= k.MaxMarked*float64(listed) {
		return fmt.Errorf("%w: %d candidates of %d recognized objects listed older than the cutoff (%.2f %%, at least %.2f %%; %d young, %d in other repositories' folders) while the keep set holds about %d keys of this run or outside what it lists",
			ErrImplausibleMark, marked, listed, pct(marked, listed), 100*k.MaxMarked, young, walled, inputs)
	}
	return nil
}

func pct(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// Bounds of what the summary lists: the sample of unrecognized keys, and
// the walls, each within maxListedBytes of keys.
const (
	maxSample      = 20
	maxListedBytes = 16 << 10
	maxListedKey   = 1 << 10 // a longer key is left out of the lists
)

// newWallSet returns the walls of Mark's listing (layout.Walls).
func newWallSet(cfg *config) *layout.Walls {
	return layout.NewWalls(cfg.dataPrefix, cfg.storagePrefix)
}

// The unrecognized report: <report>/unrecognized/.

// unrecognizedRow is a row of unrecognized/.
type unrecognizedRow struct {
	Address      string `parquet:"address,plain"`
	Size         int64  `parquet:"size"`
	LastModified *int64 `parquet:"last_modified,optional,timestamp(millisecond)"`
}

// unrecognized writes the unrecognized objects to their report file, keeps
// their count, bytes and a small sample (the smallest keys). Safe for
// concurrent use: the listing workers share it.
type unrecognized struct {
	mu          sync.Mutex
	w           *partWriter[unrecognizedRow]
	n, bytes    int64
	sample      []string
	sampleBytes int
}

func newUnrecognized(ctx context.Context, bucket *blob.Bucket, dir string) (*unrecognized, error) {
	w, err := newPartWriter[unrecognizedRow](ctx, bucket, dir+"unrecognized/"+partName)
	if err != nil {
		return nil, err
	}
	return &unrecognized{w: w}, nil
}

func (u *unrecognized) add(o *blob.ListObject) error {
	row := unrecognizedRow{Address: o.Key, Size: o.Size}
	if !o.ModTime.IsZero() {
		ms := o.ModTime.UnixMilli()
		row.LastModified = &ms
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.n++
	u.bytes += o.Size
	u.addSample(o.Key)
	return u.w.Write(row)
}

// addSample keeps the smallest keys, at most maxSample of them within
// maxListedBytes.
func (u *unrecognized) addSample(key string) {
	if len(key) > maxListedKey {
		return
	}
	if len(u.sample) == maxSample && key >= u.sample[len(u.sample)-1] {
		return
	}
	i, found := slices.BinarySearch(u.sample, key)
	if found {
		return
	}
	u.sample = slices.Insert(u.sample, i, key)
	u.sampleBytes += len(key)
	for len(u.sample) > maxSample || len(u.sample) > 1 && u.sampleBytes > maxListedBytes {
		u.sampleBytes -= len(u.sample[len(u.sample)-1])
		u.sample = u.sample[:len(u.sample)-1]
	}
}

// capList returns the first keys of list, at most maxSample of them within
// maxListedBytes.
func capList(list []string) []string {
	var out []string
	size := 0
	for _, k := range list {
		if len(out) == maxSample || size+len(k) > maxListedBytes {
			break
		}
		if len(k) <= maxListedKey {
			out = append(out, k)
			size += len(k)
		}
	}
	return out
}

// Sweep and walls: a report Mark did not make may name keys in another
// repository's folder.

// maxProbed bounds the folders whose answer a wallProbe remembers.
const maxProbed = 1 << 16

// wallProbe tells Sweep whether a candidate lies in another repository's
// folder, as Mark's walls would have said: its key holds a storage folder
// below the data folder, or — when the recognizer is not the default one,
// so that another repository's keys can be recognized (an include prefix, a
// host's recognizer) — one of the folders from the data folder down to the
// key's holds one. With the default recognizer no key of a repository nested
// anywhere in the data folder has a recognized shape, and the folders are
// not looked at: one request per slice. Not safe for concurrent use.
type wallProbe struct {
	bucket *blob.Bucket
	walls  *layout.Walls
	data   string // the data prefix, with '/'
	look   bool   // look for markers in the candidates' folders
	known  map[string]bool
}

func newWallProbe(bucket *blob.Bucket, cfg *config) *wallProbe {
	return &wallProbe{bucket: bucket, walls: newWallSet(cfg), data: cfg.dataPrefix + "/",
		look: cfg.recognize != nil || len(cfg.include) > 0, known: map[string]bool{}}
}

// reason returns why key is refused as another repository's, or "".
func (w *wallProbe) reason(ctx context.Context, key string) string {
	const walled = "in another repository's folder"
	if _, ok := w.walls.Of(key); ok {
		return walled
	}
	if !w.look || !strings.HasPrefix(key, w.data) {
		return ""
	}
	// Every folder from the data folder to the key's own, each ending in
	// its '/'.
	for end := len(w.data); end > 0; {
		hit, err := w.folderWalled(ctx, key[:end])
		if err != nil {
			return "could not look for another repository's folder: " + err.Error()
		}
		if hit {
			return walled
		}
		i := strings.IndexByte(key[end:], '/')
		if i < 0 {
			break
		}
		end += i + 1
	}
	return ""
}

// folderWalled reports whether folder (ending in '/') holds another
// repository's storage folder.
func (w *wallProbe) folderWalled(ctx context.Context, folder string) (bool, error) {
	if hit, ok := w.known[folder]; ok {
		return hit, nil
	}
	hit := false
	for _, m := range w.walls.Markers() {
		objs, _, err := w.bucket.ListPage(ctx, blob.FirstPageToken, 1, &blob.ListOptions{Prefix: folder + m[1:]})
		if err != nil {
			return false, err
		}
		if len(objs) > 0 {
			hit = true
			break
		}
	}
	if len(w.known) >= maxProbed {
		clear(w.known)
	}
	w.known[folder] = hit
	return hit, nil
}
