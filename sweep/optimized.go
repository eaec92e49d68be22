package sweep

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/lakegc/lakegc/internal/extsort"
	"github.com/lakegc/lakegc/internal/layout"
	"gocloud.dev/blob"
)

// Kinds of run, in Summary.RunKind.
const (
	RunClean     = "clean"
	RunOptimized = "optimized"
)

// DefaultSliceInterval is the longest a slice takes new addresses with the
// defaults of the module's pathprovider (its DefaultInterval, one hour; a
// slice also rolls over sooner when it is full). The default slice margin
// is DefaultSliceInterval + the link TTL + the clock skew.
const DefaultSliceInterval = time.Hour

// DefaultCleanEvery is how often a run is clean by default: every seventh
// run of a chain of runs that each start from the one before.
const DefaultCleanEvery = 7

// The records a run leaves for the next, under <report>/_lakegc/: lakeFS's
// readers read deleted/ and summary.json only, and Hadoop's readers skip
// names that start with '_'.
const (
	recordDir  = layout.RecordsFolder
	stateName  = recordDir + "state.json"
	liveName   = recordDir + "live"
	maxState   = 1 << 20
	maxYoungSl = 1000 // slices with young objects a state names; beyond, the next run is clean
)

// WithPrevious makes Mark start from the run runID of the same namespace, an
// optimized run (see the package documentation, "Clean and optimized
// runs"): it lists only the slices that started at or after that run's
// newest listed slice less the slice margin, and judges the older slices
// from that run's records. "" (the default) means a clean run; LatestRun
// finds the latest run. When the previous run cannot be used (it failed,
// has no records, or used other settings) Mark runs clean and says why in
// Summary.CleanReason.
func WithPrevious(runID string) MarkOption {
	return markOnly("Previous", func(c *config) {
		if runID != "" {
			if err := validRunID(runID); err != nil {
				c.invalid("previous run ID %q", runID)
				return
			}
		}
		c.previous = runID
	})
}

// WithSliceMargin sets how long a slice may keep receiving objects after it
// started (0: the default, DefaultSliceInterval + the link TTL + the clock
// skew): several writers fill slices at once, a slice hands out addresses
// until it rolls over, and an address can be uploaded to until its link TTL
// runs out. It must be at least the host's pathprovider interval plus its
// link TTL plus the clock skew. Too small a margin leaks garbage that only
// a clean run finds; it never deletes a live object.
func WithSliceMargin(d time.Duration) MarkOption {
	return markOnly("SliceMargin", func(c *config) {
		if d < 0 {
			c.invalid("negative slice margin %v", d)
		}
		c.sliceMargin = d
	})
}

// WithCleanEvery makes every n-th run of a chain of optimized runs a clean
// one (0: the default DefaultCleanEvery; 1: every run is clean), so that
// garbage an optimized run cannot see, such as objects uploaded into a slice
// later than the margin allows, is found in the end.
func WithCleanEvery(n int) MarkOption {
	return markOnly("CleanEvery", func(c *config) {
		if n < 0 {
			c.invalid("negative clean-every %d", n)
			return
		}
		if n == 0 {
			n = DefaultCleanEvery
		}
		c.cleanEvery = n
	})
}

// margin is the slice margin in effect.
func (c *config) margin() time.Duration {
	if c.sliceMargin > 0 {
		return c.sliceMargin
	}
	return DefaultSliceInterval + c.linkTTL + c.clockSkew
}

// runState is _lakegc/state.json: the settings a run used and what the next
// run needs besides the live record and the summary. What the summary says
// (the run's ID, kind, cutoff and newest listed slice) is taken from the
// summary, written after the state: one source, nothing to cross-check.
type runState struct {
	Version       int      `json:"version"`
	StoragePrefix string   `json:"storage_prefix"`
	DataPrefix    string   `json:"data_prefix"`
	MinAge        int64    `json:"min_age_seconds"`
	Margin        int64    `json:"slice_margin_seconds"`
	SinceClean    int      `json:"runs_since_clean"`
	LiveKeys      int64    `json:"live_keys"`
	YoungSlices   []string `json:"young_slices,omitempty"`
	YoungOverflow bool     `json:"young_overflow,omitempty"`
	// Include is the run's WithInclude prefixes, sorted; CustomRecognizer
	// says it had a WithRecognizer. A run whose recognizer differs runs
	// clean: the records hold only keys the previous recognizer accepted.
	Include          []string `json:"include,omitempty"`
	CustomRecognizer bool     `json:"custom_recognizer,omitempty"`
	// RecognizerRules is the version of the built-in recognition rules
	// (layout.RecognizerRules) the run used: a run of the same version
	// carries the keys of its records without checking them again.
	RecognizerRules int `json:"recognizer_rules,omitempty"`
	// Version 2: the keep index (_lakegc/index, IndexKeys entries, of
	// which LiveKeys have the listed flag) in place of the live record, of
	// a keep set of KeepKind; for the kind "parts", the parts record
	// (_lakegc/parts) of Parts parts.
	// Version 3: the keep index is the committed index (_lakegc/index,
	// IndexKeys entries) and the staged index (_lakegc/staged, StagedKeys
	// entries); LiveKeys is the number of listed keys of both.
	IndexKeys  int64 `json:"index_keys,omitempty"`
	StagedKeys int64 `json:"staged_keys,omitempty"`
	// IndexSum and StagedSum are the two indexes' checksums (their last 4
	// bytes): a run reads the pair its state names, never one index of
	// another run beside this one's (the join trusts that the two count a
	// key alike where it does not decode the committed one).
	IndexSum  uint32 `json:"index_crc32c,omitempty"`
	StagedSum uint32 `json:"staged_crc32c,omitempty"`
	KeepKind  string `json:"keep_kind,omitempty"`
	Parts     int64  `json:"parts,omitempty"`
	// PartsVersion is the Parts.Version of the parts counted.
	PartsVersion string `json:"parts_version,omitempty"`
}

// stateVersion is the version a run writes; a run reads version 1 too (a
// live record and no keep index: its successor counts the keep set in full).
// A run after one of version 2 (one keep index file) is clean.
const stateVersion = 3

// readState reads and checks a run's state.json.
func readState(ctx context.Context, bucket *blob.Bucket, dir string) (*runState, error) {
	b, err := readSmall(ctx, bucket, dir+stateName, maxState)
	if err != nil {
		return nil, err
	}
	return parseState(b)
}

// parseState parses a state.json, refusing what a run could not have
// written.
func parseState(b []byte) (*runState, error) {
	var s runState
	if err := json.Unmarshal(bytes.TrimSpace(b), &s); err != nil {
		return nil, fmt.Errorf("%w: state: %v", ErrInvalidInput, err)
	}
	switch {
	case s.Version == 2:
		return nil, fmt.Errorf("%w: state version 2, whose keep index this version does not read", ErrInvalidInput)
	case s.Version != stateVersion && s.Version != 1:
		return nil, fmt.Errorf("%w: state version %d", ErrInvalidInput, s.Version)
	case s.Version == 1 && (s.KeepKind != "" || s.IndexKeys != 0 || s.Parts != 0):
		return nil, fmt.Errorf("%w: state of version 1 with a keep index", ErrInvalidInput)
	case s.Version == stateVersion && s.KeepKind != kindParts && s.KeepKind != kindMultiset && s.KeepKind != kindSet:
		return nil, fmt.Errorf("%w: state: keep kind %q", ErrInvalidInput, s.KeepKind)
	case s.KeepKind != kindParts && (s.Parts != 0 || s.PartsVersion != ""):
		return nil, fmt.Errorf("%w: state: parts of a keep set of kind %q", ErrInvalidInput, s.KeepKind)
	case s.Version == 1 && s.StagedKeys != 0:
		return nil, fmt.Errorf("%w: state of version 1 with a staged index", ErrInvalidInput)
	case s.MinAge < 0 || s.Margin < 0 || s.SinceClean < 0 || s.LiveKeys < 0 || s.IndexKeys < 0 || s.StagedKeys < 0 || s.Parts < 0 || s.RecognizerRules < 0:
		return nil, fmt.Errorf("%w: state: negative value", ErrInvalidInput)
	case s.Version == stateVersion && (s.IndexKeys > math.MaxInt64/2 || s.StagedKeys > math.MaxInt64/2 || s.LiveKeys > s.IndexKeys+s.StagedKeys):
		return nil, fmt.Errorf("%w: state: %d listed keys of %d and %d", ErrInvalidInput, s.LiveKeys, s.IndexKeys, s.StagedKeys)
	case len(s.YoungSlices) > maxYoungSl:
		return nil, fmt.Errorf("%w: state names %d young slices", ErrInvalidInput, len(s.YoungSlices))
	}
	for _, name := range s.YoungSlices {
		if _, ok := layout.SliceTime(name); !ok {
			return nil, fmt.Errorf("%w: state: young slice %q", ErrInvalidInput, name)
		}
	}
	return &s, nil
}

// LatestRun returns the ID of the latest run in the report folder of the
// namespace in bucket: of the runs with a summary.json (written by Mark or
// by lakeFS's Spark client, successful or not), the one whose summary says
// the latest start_time (ties: the greatest ID), leaving out the runs of
// one shard of a sharded mark (WithShard). "" and no error when there is
// none. Pass it to WithPrevious: Mark runs clean when that run cannot be
// used. It lists the report folder and reads each run's summary, one
// request each. An empty storagePrefix is DefaultStoragePrefix. classify
// are as ReadSummary's.
func LatestRun(ctx context.Context, bucket *blob.Bucket, storagePrefix string, classify ...ErrorClassifier) (string, error) {
	if bucket == nil {
		return "", fmt.Errorf("%w: nil bucket", ErrInvalidInput)
	}
	storagePrefix = cmp.Or(storagePrefix, DefaultStoragePrefix)
	if err := validPrefix(storagePrefix); err != nil {
		return "", err
	}
	dir := reportRoot(storagePrefix)
	var ids []string
	it := bucket.List(&blob.ListOptions{Prefix: dir, Delimiter: "/"})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("sweep: list %s: %w", dir, err)
		}
		id, under := strings.CutPrefix(o.Key, dir)
		id, folder := strings.CutSuffix(id, "/")
		if under && folder && o.IsDir && validRunID(id) == nil {
			ids = append(ids, id)
		}
	}
	var best string
	var bestStart time.Time
	for _, id := range ids {
		sum, err := ReadSummary(ctx, bucket, storagePrefix, id, classify...)
		if errors.Is(err, ErrNoRun) {
			continue
		}
		if err != nil {
			// An unreadable summary may be the latest run's: say so
			// rather than start from an older one.
			return "", wrapOp("latest run", err)
		}
		if sum.ShardCount > 1 {
			continue // one shard's: no run to start a full one from
		}
		if best == "" || sum.StartTime.After(bestStart) || sum.StartTime.Equal(bestStart) && id > best {
			best, bestStart = id, sum.StartTime
		}
	}
	return best, nil
}

// previous is what an optimized run takes from the run before it.
type previous struct {
	state    *runState
	boundary time.Time           // slices older than this are not listed
	young    map[string]struct{} // slices to list whatever their age
	// carried is the keys of the unlisted slices to judge again from
	// records other than the keep index (a version 1 run's live record,
	// the previous run's candidates when it was not swept); nil: none.
	carried extsort.Iter
	// carry reports whether a key of the previous run's records is in a
	// slice this run does not list (and is recognized): the keep index's
	// listed keys it accepts are judged again. Not safe for concurrent
	// use.
	carry func([]byte) bool
	// indexFile, stagedFile and partsFile are local copies of the previous
	// run's committed index, staged index and parts record, their
	// checksums verified ("": none, a version 1 run's).
	indexFile, stagedFile, partsFile string
	// recheck says the carried keys are checked by the recognizer again.
	recheck bool
}

// skip reports whether the slice name, started at t, is judged from the
// records rather than listed.
func (p *previous) skip(name string, t time.Time) bool {
	if !t.Before(p.boundary) {
		return false
	}
	_, young := p.young[name]
	return !young
}

// sliceOf returns the slice name and start time of a key under the data
// folder data (with its '/'); false for a key that is not in a slice.
func sliceOf(key []byte, data string) (string, time.Time, bool) {
	rest, ok := bytes.CutPrefix(key, []byte(data))
	if !ok {
		return "", time.Time{}, false
	}
	i := bytes.IndexByte(rest, '/')
	if i < 0 {
		return "", time.Time{}, false
	}
	t, ok := layout.SliceTime(string(rest[:i]))
	return string(rest[:i]), t, ok
}

// carryFilter decides which keys of the previous run's records this run
// carries: those in a slice it does not list and, when recheck is set,
// that its recognizer accepts. The keys of a slice are contiguous in key
// order: the folder of the last key, data + name + "/", and its verdict
// decide every key under it without decoding the slice's name again (keys
// in any order get the same answers, decoded more often). Not safe for
// concurrent use.
type carryFilter struct {
	data    string
	skip    func(name string, t time.Time) bool
	rec     layout.Recognizer
	recheck bool
	folder  []byte // the last folder under the data folder seen, with its '/'; nil: none
	inSkip  bool   // folder is a slice that skip says is not listed
}

// newCarryFilter returns the filter's keep method, for keys under the data
// folder data (with its '/').
func newCarryFilter(data string, skip func(string, time.Time) bool, rec layout.Recognizer, recheck bool) func([]byte) bool {
	f := &carryFilter{data: data, skip: skip, rec: rec, recheck: recheck}
	return f.keep
}

func (f *carryFilter) keep(key []byte) bool {
	if f.folder == nil || !bytes.HasPrefix(key, f.folder) {
		rest, ok := bytes.CutPrefix(key, []byte(f.data))
		if !ok {
			return false
		}
		i := bytes.IndexByte(rest, '/')
		if i < 0 {
			return false // directly under the data folder: in no slice
		}
		f.folder = append(f.folder[:0], key[:len(f.data)+i+1]...)
		name := string(rest[:i])
		t, slice := layout.SliceTime(name)
		f.inSkip = slice && f.skip(name, t)
	}
	// The key is under a slice's folder: the recognizer need not decode
	// the slice's name again.
	return f.inSkip && (!f.recheck || f.rec.OKInSlice(unsafe.String(unsafe.SliceData(key), len(key)), len(f.folder)))
}

// startFrom decides whether this run can start from the previous run, and
// loads its records into the spill folder; it returns nil, and sets
// Summary.CleanReason, for a clean run. Only a cancelled context is an
// error: anything else that goes wrong makes a clean run.
func (m *marker) startFrom(ctx context.Context) (*previous, error) {
	cfg := m.cfg
	m.sum.RunKind = RunClean
	m.sinceClean = 0
	if cfg.previous == "" {
		return nil, nil
	}
	m.sum.PreviousRunID = cfg.previous
	p, reason := m.loadPrevious(ctx)
	if err := ctx.Err(); err != nil {
		if p != nil && p.carried != nil {
			p.carried.Close()
		}
		return nil, err
	}
	if p == nil {
		m.sum.CleanReason = reason
		m.log("sweep: clean run", "previous_run_id", cfg.previous, "reason", reason)
		return nil, nil
	}
	m.sum.RunKind = RunOptimized
	m.sinceClean = p.state.SinceClean + 1
	m.log("sweep: optimized run", "previous_run_id", cfg.previous, "boundary", p.boundary)
	return p, nil
}

// loadPrevious returns the previous run's records, or why a clean run is
// due.
func (m *marker) loadPrevious(ctx context.Context) (*previous, string) {
	cfg, id := m.cfg, m.cfg.previous
	if id == m.sum.RunID {
		return nil, "the previous run is this run"
	}
	if cfg.sharded() {
		return nil, "a shard's run is always clean"
	}
	if cfg.inventory != nil {
		return nil, inventoryReason
	}
	// The state is read while the summary is: both are small, and each is
	// a request's wait.
	dir := reportDir(cfg.storagePrefix, id)
	var st *runState
	stateRead := goWait(func() (err error) {
		st, err = readState(ctx, m.bucket, dir)
		return err
	})
	sum, err := ReadSummary(ctx, m.bucket, cfg.storagePrefix, id, cfg.classify...)
	stErr := stateRead()
	if err != nil {
		return nil, "previous run's summary: " + err.Error()
	}
	if !sum.Success {
		return nil, "the previous run failed"
	}
	if sum.ShardCount > 1 {
		return nil, fmt.Sprintf("the previous run was shard %d of %d", sum.ShardIndex, sum.ShardCount)
	}
	if stErr != nil {
		return nil, "previous run's records: " + stErr.Error()
	}
	newest, sliced := layout.SliceTime(sum.FirstSlice)
	switch {
	case st.StoragePrefix != cfg.storagePrefix || st.DataPrefix != cfg.dataPrefix:
		return nil, fmt.Sprintf("previous run used storage prefix %q and data prefix %q", st.StoragePrefix, st.DataPrefix)
	case st.MinAge != int64(cfg.minAge/time.Second) || time.Duration(st.MinAge)*time.Second != cfg.minAge:
		return nil, fmt.Sprintf("previous run used min age %v", time.Duration(st.MinAge)*time.Second)
	case st.Margin != int64(cfg.margin()/time.Second) || time.Duration(st.Margin)*time.Second != cfg.margin():
		return nil, fmt.Sprintf("previous run used slice margin %v", time.Duration(st.Margin)*time.Second)
	case sum.CutoffTime.IsZero():
		return nil, "the previous run's summary has no cutoff"
	case m.sum.CutoffTime.Before(sum.CutoffTime):
		return nil, fmt.Sprintf("cutoff %v is before the previous run's %v", m.sum.CutoffTime, sum.CutoffTime)
	case st.YoungOverflow:
		return nil, fmt.Sprintf("the previous run kept young objects in more than %d slices", maxYoungSl)
	case sum.FirstSlice == "":
		return nil, "the previous run listed no slice"
	case !sliced:
		return nil, fmt.Sprintf("the previous run's first slice %q is not a slice", sum.FirstSlice)
	case st.SinceClean >= cfg.cleanEvery-1: // not SinceClean+1, which a hostile state overflows
		return nil, fmt.Sprintf("a clean run every %d runs", cfg.cleanEvery)
	case !slices.Equal(st.Include, cfg.include) || st.CustomRecognizer != (cfg.recognize != nil):
		return nil, fmt.Sprintf("previous run used include prefixes %q and a custom recognizer %v", st.Include, st.CustomRecognizer)
	}
	p := &previous{state: st, boundary: newest.Add(-cfg.margin()), young: map[string]struct{}{}}
	for _, name := range st.YoungSlices {
		p.young[name] = struct{}{}
	}
	// A carried key must be recognized now too. The previous run recorded
	// only keys its recognizer accepted: with the same include prefixes
	// (checked above) and the same version of the built-in rules, they
	// are accepted now; a custom recognizer is a function, which the state
	// cannot compare, and checks every key.
	recheck := cfg.recognize != nil || st.RecognizerRules != layout.RecognizerRules
	if recheck && cfg.recognize == nil {
		m.log("sweep: carried keys checked by the recognizer again", "previous_rules", st.RecognizerRules, "rules", layout.RecognizerRules)
	}
	p.recheck = recheck
	keep := newCarryFilter(cfg.dataPrefix+"/", p.skip, cfg.recognizer(), recheck)
	// Whether the previous run was swept is read while its records are.
	var (
		swept bool
		why   string
	)
	sweptRead := goWait(func() error {
		swept, why = m.wasSwept(ctx, dir)
		return nil
	})
	defer sweptRead() // every way out waits for it
	var live string
	if st.Version == 1 {
		var n int64
		if live, n, err = m.copyLive(ctx, dir+liveName, keep); err != nil {
			return nil, "previous run's live record: " + err.Error()
		}
		if n != st.LiveKeys {
			os.Remove(live)
			return nil, fmt.Sprintf("previous run's live record holds %d keys, its state says %d", n, st.LiveKeys)
		}
	} else if live, err = m.loadIndex(ctx, dir, p); err != nil {
		return nil, err.Error()
	}
	runs := []string{live}
	sweptRead()
	if !swept {
		m.log("sweep: previous run's candidates judged again", "previous_run_id", id, "why", why)
		cands, err := m.copyCandidates(ctx, id, sum.NumDeletedObjects, keep)
		if err != nil {
			p.removeCopies(live)
			return nil, "previous run's candidates: " + err.Error()
		}
		runs = append(runs, cands)
	}
	p.carry = keep
	if p.indexFile != "" {
		// The index's listed keys are read by the join itself
		// (indexStreams).
		runs = runs[1:]
	}
	var iters []extsort.Iter
	for _, name := range runs {
		fr, err := extsort.OpenRun(name, m.spill.IOBuf())
		if err != nil {
			extsort.CloseAll(iters)
			p.removeCopies(runs...)
			return nil, "previous run's records: " + err.Error()
		}
		iters = append(iters, fr)
	}
	if len(iters) > 0 {
		p.carried = extsort.NewMerge(iters)
	}
	return p, ""
}

// removeCopies removes the files named, and the copies of the previous
// run's records p holds: a run that does not start from them leaves none
// in the spill folder for the clean run it makes.
func (p *previous) removeCopies(names ...string) {
	for _, n := range append(names, p.indexFile, p.stagedFile, p.partsFile) {
		if n != "" {
			os.Remove(n)
		}
	}
	p.indexFile, p.stagedFile, p.partsFile = "", "", ""
}

// loadIndex copies the previous run's keep index (its committed and staged
// indexes) and parts record in dir to spill files, checking their
// checksums, and returns the committed index's.
func (m *marker) loadIndex(ctx context.Context, dir string, p *previous) (string, error) {
	st := p.state
	// The records are copied at once: each is one request's wait, then
	// the store's and the disk's speed. A copy that fails leaves no file;
	// none is cancelled when another fails, so that the error named is the
	// first record's of the three that failed. A panic of the bucket's
	// comes out here once every copy has ended (closeAll).
	var (
		name, staged, parts string
		errs                [3]error
	)
	copies := []func() error{
		func() error { name, errs[0] = m.copyChecked(ctx, dir+indexName, cindexFormat); return nil },
		func() error { staged, errs[1] = m.copyChecked(ctx, dir+stagedName, stagedFormat); return nil },
	}
	if st.KeepKind == kindParts {
		copies = append(copies, func() error {
			var n int64
			parts, n, errs[2] = m.copyRecord(ctx, dir+partsName, partsFormat)
			if errs[2] == nil && n != st.Parts {
				os.Remove(parts)
				parts, errs[2] = "", fmt.Errorf("holds %d parts, its state says %d", n, st.Parts)
			}
			return nil
		})
	}
	closeAll(func() {}, copies...)
	for i, what := range []string{"committed index", "staged index", "parts record"} {
		if errs[i] != nil {
			for _, f := range []string{name, staged, parts} {
				if f != "" {
					os.Remove(f)
				}
			}
			return "", fmt.Errorf("previous run's %s: %w", what, errs[i])
		}
	}
	p.partsFile = parts
	for _, f := range []struct {
		name, what string
		want       uint32
	}{{name, "committed", st.IndexSum}, {staged, "staged", st.StagedSum}} {
		if sum, err := lastSum(f.name); err != nil || sum != f.want {
			os.Remove(name)
			os.Remove(staged)
			if p.partsFile != "" {
				os.Remove(p.partsFile)
				p.partsFile = ""
			}
			if err == nil {
				err = fmt.Errorf("checksum %08x, its state says %08x: another run's", sum, f.want)
			}
			return "", fmt.Errorf("previous run's %s index: %w", f.what, err)
		}
	}
	p.indexFile, p.stagedFile = name, staged
	return name, nil
}

// lastSum returns the checksum at the end of a record's local copy: its
// last 4 bytes, big-endian.
func lastSum(name string) (uint32, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var b [4]byte
	st, err := f.Stat()
	if err == nil {
		_, err = f.ReadAt(b[:], st.Size()-4)
	}
	return binary.BigEndian.Uint32(b[:]), err
}

// wasSwept reports whether Sweep deleted every candidate of the run in dir:
// its sweep.json says nothing failed or was refused.
func (m *marker) wasSwept(ctx context.Context, dir string) (bool, string) {
	b, err := readSmall(ctx, m.bucket, dir+"sweep.json", maxSummarySize)
	if m.cfg.classify.isNotFound(err) {
		return false, "not swept"
	}
	if err != nil {
		return false, err.Error()
	}
	var s sweepJSON
	if err := json.Unmarshal(bytes.TrimSpace(b), &s); err != nil {
		return false, "sweep.json: " + err.Error()
	}
	switch {
	case s.Deleted < 0 || s.AlreadyGone < 0 || s.Failed < 0 || s.Refused < 0:
		return false, "sweep.json: negative count"
	case s.Failed != 0 || s.Refused != 0:
		return false, fmt.Sprintf("sweep left %d failed and %d refused", s.Failed, s.Refused)
	}
	return true, ""
}

// copyLive copies the keys of a live record that keep accepts into a spill
// file, checking the whole record first; it returns the file and the number
// of keys the record held.
func (m *marker) copyLive(ctx context.Context, key string, keep func([]byte) bool) (string, int64, error) {
	r, err := m.bucket.NewReader(ctx, key, nil)
	if err != nil {
		return "", 0, fmt.Errorf("sweep: read %s: %w", key, err)
	}
	defer r.Close()
	d, err := newLiveDecoder(r, m.spill.IOBuf())
	if err != nil {
		return "", 0, err
	}
	name, err := m.copyKeys(ctx, d.next, keep)
	return name, d.Count(), err
}

// copyCandidates copies the candidates of run id that keep accepts into a
// spill file; they must be strictly ascending, and as many as its summary
// says.
func (m *marker) copyCandidates(ctx context.Context, id string, want int64, keep func([]byte) bool) (string, error) {
	next, stop := iter.Pull2(Candidates(ctx, m.bucket, m.cfg.storagePrefix, id))
	defer stop()
	var n int64
	var prev []byte
	name, err := m.copyKeys(ctx, func() ([]byte, bool, error) {
		k, err, ok := next()
		if !ok || err != nil {
			return nil, false, err
		}
		if n > 0 && bytes.Compare([]byte(k), prev) <= 0 {
			return nil, false, fmt.Errorf("%w: candidates out of order: %q after %q", ErrInvalidInput, k, prev)
		}
		n++
		prev = append(prev[:0], k...)
		return prev, true, nil
	}, keep)
	if err == nil && n != want {
		os.Remove(name)
		err = fmt.Errorf("%w: %d candidates, the summary says %d", ErrInvalidInput, n, want)
	}
	return name, err
}

// copyKeys writes the keys of next that keep accepts to a new spill file
// and returns its name.
func (m *marker) copyKeys(ctx context.Context, next func() ([]byte, bool, error), keep func([]byte) bool) (string, error) {
	rw, err := m.spill.Create()
	if err != nil {
		return "", err
	}
	for i := 1; ; i++ {
		k, ok, err := next()
		if err == nil && i%4096 == 0 {
			err = ctx.Err()
		}
		if err != nil {
			rw.Abort()
			return "", err
		}
		if !ok {
			break
		}
		if keep(k) {
			if err := rw.Add(k); err != nil {
				rw.Abort()
				return "", err
			}
		}
	}
	return rw.Finish()
}

// recorder writes what the next run needs: the keep index, every key of
// the committed keep set with its count, and the listed flag of the kept
// keys of the slices.
type recorder struct {
	index  *indexWriter // the committed index
	staged *indexWriter // the staged index
	data   string
	young  *youngSlices
	// stagedListed counts the listed keys of the staged index that the
	// committed index does not hold.
	stagedListed int64

	// The keys come in order, slice after slice: the folder of the last
	// key judged, data + name + "/", and whether it is a slice, decide
	// every key under it without parsing its name again.
	folder  []byte
	inSlice bool
}

// entry records a key of the keep set with its committed count; listed says
// the listing (or the previous run's records) found its object older than
// the cutoff, and it was kept, not walled; staged that the staged keys hold
// it; committed that the committed index is to get it (not when it is in
// a block copied). A key is recorded when it is committed, or listed in a
// slice: in the committed index when it is committed, in the staged index
// when it is staged.
func (r *recorder) entry(key []byte, count int64, listed, staged, committed bool) error {
	if listed && !r.slice(key) {
		listed = false
	}
	var aux uint64
	if listed {
		aux = idxListed
	}
	if committed && count > 0 {
		if err := r.index.add(key, count, aux); err != nil {
			return err
		}
	}
	if staged && (listed || count > 0) {
		if count == 0 {
			r.stagedListed++
		}
		return r.staged.add(key, count, aux)
	}
	return nil
}

// slice reports whether key is in a slice.
func (r *recorder) slice(key []byte) bool {
	if len(r.folder) == 0 || !bytes.HasPrefix(key, r.folder) {
		rest, ok := bytes.CutPrefix(key, []byte(r.data))
		if !ok {
			return false
		}
		i := bytes.IndexByte(rest, '/')
		if i < 0 {
			return false
		}
		r.folder = append(r.folder[:0], key[:len(r.data)+i+1]...)
		_, _, r.inSlice = sliceOf(r.folder, r.data)
	}
	return r.inSlice
}

// youngSlices collects the slices where the listing found young objects
// (bounded: past maxYoungSl it only says so). Safe for concurrent use.
type youngSlices struct {
	mu       sync.Mutex
	names    map[string]struct{}
	overflow bool
}

// addSliceOf adds the slice that holds key (a key or a folder under the
// data folder data, with its '/'), if it is in one.
func (y *youngSlices) addSliceOf(key, data string) {
	if name, _, ok := sliceOf([]byte(key), data); ok {
		y.add(name)
	}
}

func (y *youngSlices) add(name string) {
	y.mu.Lock()
	defer y.mu.Unlock()
	if _, ok := y.names[name]; ok || y.overflow {
		return
	}
	if len(y.names) >= maxYoungSl {
		y.overflow, y.names = true, nil
		return
	}
	if y.names == nil {
		y.names = map[string]struct{}{}
	}
	y.names[name] = struct{}{}
}

// writeState writes state.json, once the candidates' part, the indexes and
// the parts record are complete, and before the summary.
func (m *marker) writeState(ctx context.Context, rec *recorder, kind, version string, parts int64) error {
	st := runState{
		Version:          stateVersion,
		StoragePrefix:    m.cfg.storagePrefix,
		DataPrefix:       m.cfg.dataPrefix,
		MinAge:           int64(m.cfg.minAge / time.Second),
		Margin:           int64(m.cfg.margin() / time.Second),
		SinceClean:       m.sinceClean,
		LiveKeys:         rec.index.listed + rec.stagedListed,
		IndexKeys:        rec.index.enc.N(),
		StagedKeys:       rec.staged.enc.N(),
		IndexSum:         rec.index.enc.Sum(),
		StagedSum:        rec.staged.enc.Sum(),
		KeepKind:         kind,
		Parts:            parts,
		PartsVersion:     version,
		YoungOverflow:    rec.young.overflow,
		Include:          m.cfg.include,
		CustomRecognizer: m.cfg.recognize != nil,
		RecognizerRules:  layout.RecognizerRules,
	}
	for name := range rec.young.names {
		st.YoungSlices = append(st.YoungSlices, name)
	}
	slices.Sort(st.YoungSlices)
	return writeJSON(ctx, m.bucket, m.dir+stateName, st)
}
