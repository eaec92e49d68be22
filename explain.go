package lakegc

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/internal/nsaddr"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
)

// Verdicts of an Explanation.
const (
	// VerdictMarked: the mark took the object for garbage; a sweep of the
	// run deletes it.
	VerdictMarked = "marked"
	// VerdictKept: the mark kept the object.
	VerdictKept = "kept"
	// VerdictNotListed: the mark never judged the object: outside the
	// namespace, or outside what a mark lists.
	VerdictNotListed = "not listed"
)

// Explanation says why a mark marked or kept one object (Explain).
type Explanation struct {
	// Query is the address as asked; Address the key relative to the
	// namespace, empty when the query is outside it.
	Query   string `json:"query"`
	Address string `json:"address,omitempty"`
	// Verdict is one of the Verdict constants.
	Verdict string `json:"verdict"`
	// Reason says why, in words.
	Reason string `json:"reason"`
	// Commit is the kept commit that references the object, if that is
	// why it was kept.
	Commit string `json:"commit,omitempty"`
	// Exists, Size and ModTime are the object as the bucket holds it now.
	Exists  bool      `json:"exists"`
	Size    int64     `json:"size,omitempty"`
	ModTime time.Time `json:"mod_time,omitzero"`
	// Cutoff is the run's: objects modified at or after it are kept for
	// their age.
	Cutoff time.Time `json:"cutoff"`
}

// Explain says, for each of addresses (keys relative to the namespace, or
// full addresses), why runID, a finished mark of the namespace, marked or
// kept it, from that run's own records and inputs: its summary (the
// cutoff), its candidates, its commits report (the kept commits, whose
// objects host.Committed reads again, one commit at a time and each
// metarange once, until every address is placed), and the objects as the
// bucket holds them now. It
// holds only the asked addresses in memory, never the keep set. cfg is the
// run's Config (Bucket, Namespace, prefixes, Include, Recognize); only
// host.Committed is used, and may be nil to leave commits out.
//
// A kept object is explained as, in this order: outside the namespace or
// outside what a mark lists (lakeFS's own files, folders beside the data
// folder), not of a shape the repository writes (unrecognized), in another repository's
// folder (walled), younger than the cutoff, referenced by a kept commit
// (named), in a copy record of host.Copies (as the tracker holds them now),
// or else in the run's uncommitted input (staged on a branch) or spared by
// the host's candidate check. A marked one by its
// shape and slice. Of a shard of a sharded mark, an object of another
// shard's slices was not listed by this run (VerdictNotListed, naming the
// shard). The run of an optimized mark kept objects of skipped
// slices from its records; those read as the last case too.
func Explain(ctx context.Context, host Host, cfg Config, runID string, addresses []string) ([]Explanation, error) {
	s, err := cfg.validated()
	if err != nil {
		return nil, err
	}
	sum, err := sweep.ReadSummary(ctx, s.Bucket, s.StoragePrefix, runID)
	if err == nil && !sum.Success {
		err = fmt.Errorf("%w: %s", sweep.ErrRunFailed, runID)
	}
	if err != nil {
		return nil, fmt.Errorf("lakegc: explain: %w", err)
	}
	out := make([]Explanation, len(addresses))
	open := map[string][]int{} // key → indexes of the explanations still open
	for i, q := range addresses {
		e := &out[i]
		e.Query, e.Cutoff = q, sum.CutoffTime
		key := q
		if nsaddr.IsFull(q) {
			keys, class, err := s.ns.Check(nil, q)
			if err != nil {
				return nil, fmt.Errorf("lakegc: explain: %w", err)
			}
			if class != nsaddr.Inside || len(keys) == 0 {
				e.Verdict, e.Reason = VerdictNotListed, "outside the namespace (an import, or another repository's): never in its listing, never a candidate"
				continue
			}
			key = keys[0]
		}
		e.Address = key
		open[key] = append(open[key], i)
	}
	// The candidates.
	for a, err := range sweep.Candidates(ctx, s.Bucket, s.StoragePrefix, runID) {
		if err != nil {
			return nil, fmt.Errorf("lakegc: explain: %w", err)
		}
		for _, i := range open[a] {
			_, why := shapeReason(a, s.DataPrefix, s.Include)
			out[i].Verdict, out[i].Reason = VerdictMarked, why+"; "+markedWhy(sum)
		}
	}
	// The object now, and what its key and age say.
	rec := s.Recognize
	if rec == nil {
		rec = sweep.DefaultRecognizer(s.DataPrefix)
	}
	for key, idx := range open {
		attrs, err := s.Bucket.Attributes(ctx, key)
		if err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			return nil, fmt.Errorf("lakegc: explain: stat %s: %w", key, err)
		}
		var verdict, reason string
		var isWalled bool
		var wallErr error
		if out[idx[0]].Verdict != VerdictMarked {
			isWalled, wallErr = walled(ctx, s.Bucket, key, s.DataPrefix, s.StoragePrefix)
		}
		included := false
		for _, p := range s.Include {
			included = included || strings.HasPrefix(key, p)
		}
		switch {
		case strings.HasPrefix(key, s.StoragePrefix+"/"):
			verdict, reason = VerdictNotListed, "under the storage prefix "+s.StoragePrefix+"/, lakeFS's own files: never listed"
		case strings.Contains(key, "/") && !strings.HasPrefix(key, s.DataPrefix+"/"):
			verdict, reason = VerdictNotListed, "outside the data folder "+s.DataPrefix+"/ and not at the top level: never listed, never collected"
		case sum.ShardCount > 1 && shardOf(key, s.DataPrefix, sum.ShardCount) != sum.ShardIndex:
			verdict, reason = VerdictNotListed, fmt.Sprintf("listed by shard %d of this sharded mark's %d, another run (this is shard %d): explain it with that shard's run",
				shardOf(key, s.DataPrefix, sum.ShardCount), sum.ShardCount, sum.ShardIndex)
		case !included && !rec(key):
			verdict, reason = VerdictKept, "unrecognized: not of a shape the repository writes (another tenant's file, an import source); never collected"
		case wallErr != nil:
			return nil, fmt.Errorf("lakegc: explain: %s: %w", key, wallErr)
		case isWalled:
			verdict, reason = VerdictKept, "walled: in another repository's folder (it holds "+s.StoragePrefix+"/); never collected"
		}
		for _, i := range idx {
			e := &out[i]
			if err == nil {
				e.Exists, e.Size, e.ModTime = true, attrs.Size, attrs.ModTime.UTC()
			}
			if e.Verdict == VerdictMarked {
				continue
			}
			e.Verdict, e.Reason = verdict, reason
			if verdict == "" && e.Exists && !e.ModTime.Before(sum.CutoffTime) {
				e.Verdict, e.Reason = VerdictKept, fmt.Sprintf("young: modified %s, at or after the run's cutoff %s", e.ModTime.Format(time.RFC3339), sum.CutoffTime.Format(time.RFC3339))
			}
		}
		if out[idx[0]].Verdict != "" {
			delete(open, key)
		}
	}
	if len(open) > 0 && host.Committed != nil {
		if err := explainCommitted(ctx, host, s, runID, open, out); err != nil {
			return nil, err
		}
	}
	if len(open) > 0 && host.Copies != nil && s.Repository != "" {
		if err := explainCopies(ctx, host, s, open, out); err != nil {
			return nil, err
		}
	}
	for _, idx := range open {
		for _, i := range idx {
			e := &out[i]
			e.Verdict = VerdictKept
			switch {
			case !e.Exists:
				e.Reason = "not in the bucket now, and not a candidate of the run: kept then (staged, copied, or in a kept commit), deleted since, or never written"
			case host.Committed == nil:
				e.Reason = "referenced by the run's inputs: a kept commit, a staged entry or a copy record (commits not read)"
			default:
				e.Reason = "in no kept commit: in the run's uncommitted input (staged on a branch, or a copy record), or spared by the host's candidate check"
			}
		}
	}
	return out, nil
}

// explainCommitted reads the run's kept commits one at a time, until every
// open key is found in one, and each metarange once (commits of the same
// metarange hold the same objects); found keys leave open.
func explainCommitted(ctx context.Context, host Host, s settings, runID string, open map[string][]int, out []Explanation) error {
	key := layout.CommitsKey(s.StoragePrefix, runID)
	r, err := s.Bucket.NewReader(ctx, key, nil)
	if err != nil {
		return fmt.Errorf("lakegc: explain: commits report %s: %w", key, err)
	}
	active, err := retention.ReadCommitsCSV(r)
	r.Close()
	if err != nil {
		return fmt.Errorf("lakegc: explain: commits report %s: %w", key, err)
	}
	c := &cycle{cfg: s, host: host, report: &Report{RunID: runID}, ns: s.ns}
	read := map[string]bool{} // the metaranges read: a commit of one read already holds nothing new
	for _, a := range active {
		if a.MetaRangeID != "" {
			if read[a.MetaRangeID] {
				continue
			}
			read[a.MetaRangeID] = true
		}
		seq := c.relativeAddresses(ctx, "committed", host.Committed.CommittedAddresses(ctx, []retention.ActiveCommit{a}))
		for k, err := range seq {
			if err != nil {
				return fmt.Errorf("lakegc: explain: commit %s: %w", a.CommitID, err)
			}
			idx, ok := open[k]
			if !ok {
				continue
			}
			for _, i := range idx {
				e := &out[i]
				e.Verdict, e.Commit = VerdictKept, a.CommitID
				e.Reason = "referenced by kept commit " + a.CommitID
				if e.Exists {
					e.Reason += fmt.Sprintf(" (modified %s, before the cutoff %s)", e.ModTime.Format(time.RFC3339), e.Cutoff.Format(time.RFC3339))
				}
			}
			delete(open, k)
			if len(open) == 0 {
				return nil
			}
		}
	}
	return nil
}

// shardOf is the shard of a sharded mark of count shards that lists key
// (sweep.WithShard): a slice's by sweep.SliceShard, and shard 0 for the
// rest (top-level objects, loose objects and other folders under the data
// folder).
func shardOf(key, data string, count int) int {
	rest, ok := strings.CutPrefix(key, data+"/")
	if !ok {
		return 0
	}
	name, _, folder := strings.Cut(rest, "/")
	if _, slice := layout.SliceTime(name); !folder || !slice {
		return 0
	}
	return sweep.SliceShard(name, count)
}

// walled reports whether key lies in another repository's folder: a folder
// at or below the data folder that holds "<storage prefix>/", as the key
// shows it or as one listing request per such folder finds it.
func walled(ctx context.Context, bucket *blob.Bucket, key, data, storage string) (bool, error) {
	rest, ok := strings.CutPrefix(key, data+"/")
	if !ok {
		return false, nil
	}
	if strings.Contains("/"+rest, "/"+storage+"/") {
		return true, nil
	}
	folder := data + "/"
	for {
		page, _, err := bucket.ListPage(ctx, blob.FirstPageToken, 1, &blob.ListOptions{Prefix: folder + storage + "/"})
		if err != nil {
			return false, err
		}
		if len(page) > 0 {
			return true, nil
		}
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return false, nil
		}
		folder, rest = folder+rest[:i+1], rest[i+1:]
	}
}

// explainCopies places open keys in the host's copy records, as the
// tracker holds them now (records live for the tracker's TTL, so a record
// the run read may be gone, and one made since may be there); found keys
// leave open.
func explainCopies(ctx context.Context, host Host, s settings, open map[string][]int, out []Explanation) error {
	for c, err := range host.Copies.List(ctx, s.Repository) {
		if err != nil {
			return fmt.Errorf("lakegc: explain: copy records: %w", err)
		}
		keys := []string{c.PhysicalAddress}
		if nsaddr.IsFull(c.PhysicalAddress) {
			if keys, _, err = s.ns.Check(nil, c.PhysicalAddress); err != nil {
				return fmt.Errorf("lakegc: explain: copy records: %w", err)
			}
		}
		for _, k := range keys {
			for _, i := range open[k] {
				out[i].Verdict = VerdictKept
				out[i].Reason = fmt.Sprintf("a copy record: %s copied to %s on branch %s at %s (the tracker's records now)",
					c.SrcPath, c.DstPath, c.Branch, c.CreatedAt.Format(time.RFC3339))
			}
			delete(open, k)
		}
		if len(open) == 0 {
			return nil
		}
	}
	return nil
}
